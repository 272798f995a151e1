package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Users' profiles: created once (the handle kept unique by a guard item
// written in the same transaction) and changed by their owner.

// CreateUser creates u's profile and its counter (its counts zero,
// CreatedAt now) and claims its handle, in one transaction. A second profile for the same ID or a
// handle already taken is a Conflict; nothing is written then.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	const op = "store.CreateUser"
	if err := CheckIDs(op, u.ID); err != nil {
		return User{}, err
	}
	if !ValidHandle(u.Handle) {
		return User{}, errs.E(op, errs.Validation, "invalid handle: "+HandleRule)
	}
	u.CreatedAt = timestamp(s.now())
	u.PostCount, u.FollowerCount, u.FollowingCount = 0, 0, 0
	userAV, err := marshal(op, newUserItem(u))
	if err != nil {
		return User{}, err
	}
	handleAV, err := marshal(op, newHandleItem(u))
	if err != nil {
		return User{}, err
	}
	counterAV, err := marshal(op, newUserCounter(u))
	if err != nil {
		return User{}, err
	}
	err = s.transact(ctx, op,
		s.put(counterAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "a profile already exists for this user")
		}),
		s.put(userAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "a profile already exists for this user")
		}),
		s.put(handleAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "handle is taken")
		}))
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// UpdateUser sets the user's name and bio (an empty bio removes it); nil
// leaves a field as it is. One conditional UpdateItem, then a GetItem of its
// counts; an absent profile is NotFound.
func (s *Store) UpdateUser(ctx context.Context, id string, name, bio *string) (User, error) {
	const op = "store.UpdateUser"
	if err := CheckIDs(op, id); err != nil {
		return User{}, err
	}
	upd := changes{}
	upd.set("name", name)
	if bio != nil && *bio == "" {
		upd.remove("bio")
	} else {
		upd.set("bio", bio)
	}
	var u User
	if err := s.update(ctx, op, Key{UserPK(id), SKMetadata}, upd, "", "", errs.E(op, errs.NotFound, "no profile: call createUser first"), nil, &u); err != nil {
		return User{}, err
	}
	return u, addCounter(ctx, s, op, UserPK(id), &u)
}

package bench

var NiceCeiling = niceCeiling

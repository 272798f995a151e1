package live

// SetChunkBytes makes p push chunks of at most n bytes of readers, so
// that a test of a few hundred followers pushes several.
func SetChunkBytes(p *Projection, n int) { p.chunkBytes = n }

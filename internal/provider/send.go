package provider

import "context"

// SendEach sends msgs one call per message, in order: the Send of kinds
// whose vendor has no batch API.
func SendEach(ctx context.Context, msgs []Message, one func(context.Context, Message) Result) []Result {
	out := make([]Result, len(msgs))
	for i, m := range msgs {
		out[i] = one(ctx, m)
	}
	return out
}

// SendChunks sends msgs in runs of at most max messages, in order: a run
// of one through one (the vendor's single-message call), a longer run
// through batch. An account may raise its batch size
// (dispatch_max_batch_size) above what the vendor takes in one call; this
// keeps every call within it.
func SendChunks(ctx context.Context, msgs []Message, max int,
	one func(context.Context, Message) Result,
	batch func(context.Context, []Message) []Result,
) []Result {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]Result, 0, len(msgs))
	for start := 0; start < len(msgs); start += max {
		chunk := msgs[start:min(start+max, len(msgs))]
		if len(chunk) == 1 {
			out = append(out, one(ctx, chunk[0]))
			continue
		}
		out = append(out, batch(ctx, chunk)...)
	}
	return out
}

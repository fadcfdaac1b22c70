package delivery

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/tracing"
)

// The engine's spans (README "Tracing"). A queue job carries many
// requests, each accepted in a trace of its own: the job's run is one
// span ("dispatch job"), and each request's delivery is a span
// ("dispatch") that continues the request's trace (the traceparent its
// job carried, tracing.ParentOf) and links to the run's span; each vendor
// call is a client span under it. Every function here is called only when
// e.tracer is on.

// startJob starts the span of queue job queueJobID's run.
func (e *Engine) startJob(ctx context.Context, queueJobID int64) (context.Context, trace.Span) {
	return e.tracer.Start(ctx, "dispatch job", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(tracing.KeyQueueJobID.Int64(queueJobID)))
}

// startMessage starts the span of rn's delivery in its request's trace,
// or under the job's span when the job carried no trace for it.
func (e *Engine) startMessage(ctx context.Context, rn *run) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		tracing.KeyRequestID.String(rn.req.ID), tracing.KeyWorkspaceID.String(rn.req.WorkspaceID),
		tracing.KeyChannel.String(string(rn.msg.Channel)))}
	if parent := tracing.ParentOf(ctx, rn.req.ID); parent.IsValid() {
		if job := trace.SpanContextFromContext(ctx); job.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: job}))
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	return e.tracer.Start(ctx, "dispatch", opts...)
}

// endMessage ends a delivery's span with its outcome.
func endMessage(span trace.Span, out outcome) {
	switch {
	case out.success:
		span.SetAttributes(tracing.KeyOutcome.String("delivered"), tracing.KeyProviderAccount.String(out.accountID))
	case out.halt != nil:
		span.SetAttributes(tracing.KeyOutcome.String("later"))
	default:
		span.SetAttributes(tracing.KeyOutcome.String("failed"), tracing.KeyFailureCode.String(string(out.code)))
		span.SetStatus(codes.Error, out.msg)
	}
	span.End()
}

// startVendor starts the client span of one vendor call through account a.
func (e *Engine) startVendor(ctx context.Context, rn *run, a *notify.ProviderAccount) (context.Context, trace.Span) {
	return e.tracer.Start(ctx, a.ProviderKind+" send", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		tracing.KeyProviderKind.String(a.ProviderKind), tracing.KeyProviderAccount.String(a.ID),
		tracing.KeyProviderName.String(a.DisplayName), tracing.KeyChannel.String(string(rn.msg.Channel)),
		tracing.KeyRequestID.String(rn.req.ID)))
}

// endVendor ends a vendor call's span with the vendor as its peer and
// the call's answer.
func endVendor(span trace.Span, res provider.Result) {
	status := 0
	if res.Exchange.Response != nil {
		status = res.Exchange.Response.HTTPStatus
	}
	tracing.Peer(span, res.Exchange.URL, status)
	if res.Batch != nil {
		span.SetAttributes(tracing.KeyBatchIndex.Int(res.Batch.Index), tracing.KeyBatchSize.Int(res.Batch.Size))
	}
	if res.Err != nil {
		span.SetAttributes(tracing.KeyFailureCode.String(string(res.Err.Code)))
		span.SetStatus(codes.Error, res.Err.Message)
	}
	span.End()
}

// startWebhook starts the client span of one webhook try and gives the
// receiver the trace (traceparent), so it may continue it.
func (e *Engine) startWebhook(ctx context.Context, req *http.Request, p notify.WebhookPost) trace.Span {
	_, span := e.tracer.Start(ctx, "webhook POST", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(tracing.KeyWebhookID.String(p.ID)))
	req.Header.Set("traceparent", tracing.Format(span.SpanContext()))
	return span
}

// endWebhook ends a webhook try's span with the receiver as its peer.
func endWebhook(span trace.Span, url string, out notify.WebhookPostResult) {
	status := 0
	if out.Status != nil {
		status = *out.Status
	}
	tracing.Peer(span, url, status)
	if out.Error != "" {
		span.SetStatus(codes.Error, out.Error)
	} else {
		span.SetAttributes(tracing.KeyOutcome.String("delivered"))
	}
	span.End()
}

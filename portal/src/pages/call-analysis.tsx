import type { SessionDetail } from '../types.ts';

type Analysis = NonNullable<SessionDetail['analysis']>;
type Message = NonNullable<SessionDetail['takenMessage']>;

const WHAT: Record<string, string> = {
  summary: 'a summary',
  structuredData: 'structured data',
  successCriteria: 'a success verdict',
};

/** The message a caller left with take_message. */
function MessageView(props: { m: Message }) {
  const { m } = props;
  return (
    <dl class="stats" data-testid="taken-message">
      <div>
        <dt>From</dt>
        <dd>{m.callerName ?? 'not given'}</dd>
      </div>
      <div>
        <dt>Call back on</dt>
        <dd>{m.callbackNumber ?? 'not given'}</dd>
      </div>
      <div>
        <dt>Urgency</dt>
        <dd>{m.urgency}</dd>
      </div>
      <div>
        <dt>Message</dt>
        <dd>{m.message}</dd>
      </div>
    </dl>
  );
}

/**
 * The call's outcome in words and data (issue #33): the message taken, and the post-call analysis with what produced
 * it (the agent's LLM, or the local rule-based extractor, which says what it cannot do).
 */
export function CallOutcome(props: { analysis?: Analysis; message?: Message; ended: boolean; pending: boolean }) {
  const { analysis: a } = props;
  const message = props.message ?? a?.message;
  if (!a && !message && !props.pending) return null;
  return (
    <section data-testid="call-analysis">
      <h2>Outcome</h2>
      {message ? <MessageView m={message} /> : null}
      {!a ? (
        <p class="muted" role="status">
          {!props.ended
            ? 'Analysed when the call ends.'
            : props.pending
              ? 'The analysis is running; this page shows it when it is done.'
              : 'This call was not analysed.'}
        </p>
      ) : null}
      {a?.engine ? (
        <p class="muted" data-testid="analysis-engine">
          Analysed by {a.engine.label}
          {a.engine.model ? `, model ${a.engine.model}` : ''}
        </p>
      ) : null}
      {a?.status === 'failed' ? <p class="error">The analysis failed: {a.error}</p> : null}
      {a?.summary ? <p data-testid="analysis-summary">{a.summary}</p> : null}
      {a?.success ? (
        <p data-testid="analysis-success">
          <strong>{a.success.success ? 'Successful' : 'Not successful'}</strong>: {a.success.reason}
        </p>
      ) : null}
      {a?.structuredData ? (
        <>
          <h3>Structured data</h3>
          <dl class="stats" data-testid="analysis-data">
            {Object.entries(a.structuredData).map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
              </div>
            ))}
          </dl>
          {a.structuredDataError ? <p class="error">Does not match the schema: {a.structuredDataError}</p> : null}
        </>
      ) : null}
      {a?.extracted ? (
        <dl class="stats" data-testid="analysis-extracted">
          <div>
            <dt>Phone numbers</dt>
            <dd>{a.extracted.phoneNumbers.join(', ') || 'none'}</dd>
          </div>
          <div>
            <dt>Names</dt>
            <dd>{a.extracted.names.join(', ') || 'none'}</dd>
          </div>
          <div>
            <dt>Dates and times</dt>
            <dd>{a.extracted.dateTimes.join(', ') || 'none'}</dd>
          </div>
          <div>
            <dt>Callback requested</dt>
            <dd>{a.extracted.callbackRequested ? 'yes' : 'no'}</dd>
          </div>
        </dl>
      ) : null}
      {a?.notAvailable?.length ? (
        <p class="muted">This engine cannot produce {a.notAvailable.map((k) => WHAT[k] ?? k).join(', ')}.</p>
      ) : null}
    </section>
  );
}

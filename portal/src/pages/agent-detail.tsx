import { useEffect, useRef, useState } from 'preact/hooks';
import { errorMessage, v1 } from '../api.ts';
import type { Agent, Collection, Page, SessionSummary } from '../types.ts';
import { ConfirmButton, ErrorBox, fmtDate, Link, Loading, PageHeader, useAsync } from '../ui.tsx';
import { DirectVoice, type VoiceEvent } from '../voice/direct-voice.ts';
import { navigate } from '../router.ts';
import { AgentForm } from './agent-form.tsx';
import { callState, failureReason, KIND_WORDS } from '../call-words.ts';

export function AgentDetailPage(props: { id: string }) {
  const enc = encodeURIComponent(props.id);
  const agent = useAsync(() => v1<Agent>(`/agents/${enc}`));
  const cols = useAsync(() => v1<Page<Collection>>('/collections', { query: { limit: 100 } }));
  const calls = useAsync(() =>
    v1<Page<SessionSummary>>('/observability/sessions', { query: { agentId: props.id, limit: 5 } }),
  );
  const [delError, setDelError] = useState<unknown>(null);
  return (
    <section>
      <PageHeader title={agent.data ? `Agent: ${agent.data.name}` : 'Agent'}>
        <Link href={`/agents/${enc}/tests`}>Tests</Link> · <Link href="/agents">All agents</Link>
      </PageHeader>
      <ErrorBox error={agent.error} />
      {agent.loading && !agent.data ? <Loading what="the agent" /> : null}
      {agent.data && cols.data ? (
        <div class="two-col">
          <div class="card">
            <h2>Configuration</h2>
            <p class="muted">
              Id <code>{agent.data.id}</code> · updated {fmtDate(agent.data.updatedAt)}
            </p>
            <AgentForm
              key={agent.data.updatedAt}
              agent={agent.data}
              collections={cols.data.data}
              submitLabel="Save changes"
              onSave={async (body) => {
                await v1<Agent>(`/agents/${enc}`, { method: 'PUT', json: body });
              }}
            />
            <h3>Danger zone</h3>
            <p class="muted">
              Archiving keeps its calls and chat history readable; it can be restored through the API.
            </p>
            <ConfirmButton
              label="Archive agent"
              confirmLabel="Archive it"
              onConfirm={() =>
                void v1(`/agents/${enc}`, { method: 'DELETE' }).then(() => navigate('/agents'), setDelError)
              }
            />
            <ErrorBox error={delError} />
          </div>
          <div>
            <TalkPanel agentId={props.id} onEnded={calls.reload} />
            <ChatPanel agentId={props.id} />
            <div class="card">
              <h2>Recent calls</h2>
              {calls.data?.data.length ? (
                <ul>
                  {calls.data.data.map((c) => (
                    <li key={c.id}>
                      <Link href={`/calls/${encodeURIComponent(c.id)}`}>{fmtDate(c.startedAt)}</Link> ·{' '}
                      {KIND_WORDS[c.kind]} · {c.turns} turns · {callState(c).words}
                      {callState(c).cls === 'failed' ? <span class="bad"> ({failureReason(c)})</span> : null}
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="muted">No calls yet.</p>
              )}
            </div>
          </div>
        </div>
      ) : null}
    </section>
  );
}

interface ChatReply {
  reply: string;
  conversationId: string;
}

function ChatPanel(props: { agentId: string }) {
  const [log, setLog] = useState<Array<{ who: 'you' | 'agent'; text: string }>>([]);
  const [conversationId, setConversationId] = useState<string | undefined>();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState('');
  return (
    <div class="card">
      <h2>Test chat</h2>
      <ol class="chat" aria-live="polite" aria-label="Chat transcript">
        {log.map((m, i) => (
          <li key={i} class={m.who}>
            <span class="who">{m.who === 'you' ? 'You' : 'Agent'}:</span> {m.text}
          </li>
        ))}
      </ol>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const message = msg.trim();
          if (!message) return;
          setBusy(true);
          setError(null);
          setLog((l) => [...l, { who: 'you', text: message }]);
          setMsg('');
          v1<ChatReply>(`/agents/${encodeURIComponent(props.agentId)}/chat`, {
            json: { message, conversationId },
          }).then(
            (r) => {
              setConversationId(r.conversationId);
              setLog((l) => [...l, { who: 'agent', text: r.reply }]);
              setBusy(false);
            },
            (e2: unknown) => (setError(e2), setBusy(false)),
          );
        }}
      >
        <label for="chat-msg" class="sr-only">
          Message
        </label>
        <input id="chat-msg" value={msg} onInput={(e) => setMsg(e.currentTarget.value)} placeholder="Say something" />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {conversationId ? (
          <button type="button" onClick={() => (setLog([]), setConversationId(undefined))}>
            New conversation
          </button>
        ) : null}
      </form>
      <ErrorBox error={error} />
    </div>
  );
}

/** "Talk to it": a direct voice session with a short-lived token minted from the portal session. */
function TalkPanel(props: { agentId: string; onEnded: () => void }) {
  const [lines, setLines] = useState<string[]>([]);
  const [live, setLive] = useState(false);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const voice = useRef<DirectVoice | null>(null);
  useEffect(() => () => voice.current?.stop(), []);
  const add = (s: string) => setLines((l) => [...l.slice(-50), s]);
  const onEvent = (e: VoiceEvent) => {
    if (e.kind === 'started') setSessionId(e.sessionId);
    else if (e.kind === 'you') add(`You: ${e.text}`);
    else if (e.kind === 'agent') add(`Agent: ${e.text}`);
    else if (e.kind === 'interrupted') add('(interrupted)');
    else if (e.kind === 'error') add(`Error: ${e.message}`);
    else if (e.kind === 'closed') {
      add(`Call ended (${e.code}).`);
      setLive(false);
      props.onEnded();
    }
  };
  async function start() {
    try {
      const t = await v1<{ token: string; sessionId: string }>('/sessions/direct', {
        json: { agentId: props.agentId },
      });
      const v = new DirectVoice(onEvent);
      voice.current = v;
      await v.start(props.agentId, t.token);
      setLive(true);
      add('Connected: speak now.');
    } catch (e) {
      voice.current?.stop();
      add(`Error: ${errorMessage(e)}`);
    }
  }
  return (
    <div class="card">
      <h2>Talk to it</h2>
      <p class="muted">Uses your microphone and speaker over the direct WebSocket.</p>
      <div class="row">
        <button type="button" class="primary" disabled={live} onClick={() => void start()}>
          Start talking
        </button>
        <button type="button" disabled={!live} onClick={() => voice.current?.stop()}>
          Hang up
        </button>
        {sessionId ? <Link href={`/calls/${encodeURIComponent(sessionId)}`}>Open this call</Link> : null}
      </div>
      <ol class="chat" aria-live="polite" aria-label="Voice transcript">
        {lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ol>
    </div>
  );
}

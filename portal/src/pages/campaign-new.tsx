import { useState } from 'preact/hooks';
import { v1 } from '../api.ts';
import { navigate } from '../router.ts';
import { parseRecipients, type ParsedRecipients } from '../recipients-csv.ts';
import type { Agent, Campaign, Estimate, Page } from '../types.ts';
import { ErrorBox, Field, fieldError, fmtNum, useAction, useAsync } from '../ui.tsx';

const EXAMPLE_CSV =
  'phone,first_name,timeZone\n+14155550123,Ada,America/Los_Angeles\n+442071838750,Grace,Europe/London\n';

/**
 * A new campaign from a CSV of recipients: the file's rows are checked first (each mistake listed with its line,
 * nothing sent), then priced (POST /v1/estimate, kind `campaign`: per call, in all, and how many calls the balance
 * and today's caps fund now), and only then started (POST /v1/campaigns).
 */
export function NewCampaign() {
  const agents = useAsync(() => v1<Page<Agent>>('/agents', { query: { limit: 100 } }));
  const [f, setF] = useState<Record<string, string>>({
    agentId: '',
    name: '',
    from: '',
    timeZone: 'UTC',
    start: '00:00',
    end: '24:00',
    maxConcurrency: '1',
    maxAttempts: '3',
    minutesPerCall: '2',
  });
  const [csvName, setCsvName] = useState('');
  const [parsed, setParsed] = useState<ParsedRecipients | null>(null);
  const [estimate, setEstimate] = useState<Estimate | null>(null);
  const priceIt = useAction();
  const start = useAction();
  const list = agents.data?.data ?? [];
  const agentId = f.agentId || list[0]?.id || '';
  const set = (k: string) => ({
    value: f[k] ?? '',
    onInput: (e: Event) => {
      const value = (e.currentTarget as HTMLInputElement).value;
      setF((s) => ({ ...s, [k]: value }));
      setEstimate(null);
    },
  });
  const ready = parsed && parsed.errors.length === 0 && parsed.recipients.length > 0;
  const err = (p: string) => fieldError(start.error, p);
  // An API error about a recipient (`recipients.3.phone`) names the file's line (header = line 1).
  const rowParam = /^(?:body\.)?recipients\.(\d+)/.exec((start.error as { param?: string } | null)?.param ?? '');

  const load = (text: string) => {
    setParsed(parseRecipients(text));
    setEstimate(null);
  };

  return (
    <form
      class="card new-campaign"
      aria-labelledby="new-campaign-title"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!ready || !estimate) return;
        void start.act(async () => {
          const c = await v1<Campaign>('/campaigns', {
            json: {
              agentId,
              ...(f.name ? { name: f.name } : {}),
              from: f.from,
              recipients: parsed.recipients,
              maxConcurrency: Number(f.maxConcurrency),
              callingHours: { start: f.start, end: f.end },
              timeZone: f.timeZone,
              retry: { maxAttempts: Number(f.maxAttempts) },
            },
          });
          navigate(`/campaigns/${encodeURIComponent(c.id)}`);
        });
      }}
    >
      <h2 id="new-campaign-title">New campaign</h2>
      <div class="grid2">
        <Field
          label="Agent"
          name="agentId"
          as="select"
          value={agentId}
          onChange={(e) => (setF((s) => ({ ...s, agentId: e.currentTarget.value })), setEstimate(null))}
          error={err('agentId')}
        >
          {list.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </Field>
        <Field label="Campaign name" name="name" {...set('name')} maxLength={200} error={err('name')} />
        <Field
          label="Caller id (from)"
          name="from"
          {...set('from')}
          placeholder="+14155550100"
          hint="A Twilio number of your account"
          error={err('from')}
        />
        <Field
          label="Time zone"
          name="timeZone"
          {...set('timeZone')}
          hint="For calling hours, unless a row has its own"
          error={err('timeZone')}
        />
        <Field
          label="Calling hours from"
          name="callingHours.start"
          {...set('start')}
          pattern="[0-2][0-9]:[0-5][0-9]"
          hint="HH:MM, each recipient's local time"
          error={err('callingHours')}
        />
        <Field
          label="Calling hours until"
          name="callingHours.end"
          {...set('end')}
          pattern="[0-2][0-9]:[0-5][0-9]"
          hint="00:00 to 24:00 is any time; an end before the start spans midnight"
        />
        <Field
          label="Calls at once"
          name="maxConcurrency"
          type="number"
          min="1"
          max="1000"
          {...set('maxConcurrency')}
          error={err('maxConcurrency')}
        />
        <Field
          label="Attempts per recipient"
          name="retry.maxAttempts"
          type="number"
          min="1"
          max="10"
          {...set('maxAttempts')}
          hint="Retried on no answer, busy or voicemail"
          error={err('retry')}
        />
        <Field
          label="Expected minutes per call"
          name="minutesPerCall"
          type="number"
          min="0.5"
          max="240"
          step="0.5"
          {...set('minutesPerCall')}
          hint="For the estimate only"
        />
      </div>
      <Field
        label="Recipients (CSV file)"
        name="recipients-file"
        type="file"
        accept=".csv,text/csv"
        hint="A phone column (E.164), an optional timeZone column, and one column per {{variable}}."
        onChange={(e) => {
          const file = (e.currentTarget as HTMLInputElement).files?.[0];
          if (!file) return;
          setCsvName(file.name);
          void file.text().then(load);
        }}
      />
      <p class="muted">
        Or{' '}
        <button type="button" class="link-button" onClick={() => (setCsvName('example.csv'), load(EXAMPLE_CSV))}>
          use an example file
        </button>{' '}
        (<code>{EXAMPLE_CSV.split('\n')[0]}</code>).
      </p>
      {parsed ? (
        <div role="status" data-testid="csv-check">
          {parsed.errors.length ? (
            <div class="error">
              <p>
                {csvName}: {parsed.errors.length} {parsed.errors.length === 1 ? 'row needs' : 'rows need'} fixing;
                nothing is dialled until the file is right.
              </p>
              <ul class="row-errors">
                {parsed.errors.map((e, i) => (
                  <li key={i}>
                    Line {e.line}: {e.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : (
            <p class="ok">
              {csvName}: {parsed.recipients.length} recipients
              {parsed.variables.length ? `, variables ${parsed.variables.join(', ')}` : ''}.
            </p>
          )}
        </div>
      ) : null}
      {ready ? (
        <p>
          <button
            type="button"
            disabled={priceIt.busy}
            onClick={() =>
              void priceIt.act(async () => {
                setEstimate(
                  await v1<Estimate>('/estimate', {
                    json: {
                      kind: 'campaign',
                      agentId,
                      recipients: parsed.recipients.length,
                      minutesPerCall: Number(f.minutesPerCall) || 1,
                    },
                  }),
                );
              })
            }
          >
            Estimate the cost
          </button>
        </p>
      ) : null}
      <ErrorBox error={priceIt.error} />
      {estimate?.campaign ? (
        <p class="estimate" data-testid="campaign-estimate" role="status">
          About <strong>{fmtNum(estimate.credits)} credits</strong> for {estimate.campaign.recipients} answered calls of{' '}
          {f.minutesPerCall} minutes ({fmtNum(estimate.campaign.creditsPerCall)} a call); {fmtNum(estimate.remaining)}{' '}
          credits left this period.{' '}
          {estimate.campaign.callsFundedNow < estimate.campaign.recipients
            ? `Only ${estimate.campaign.callsFundedNow} calls are funded now; the rest wait for credits or the next day.`
            : 'Every call is funded now.'}
        </p>
      ) : null}
      {rowParam ? (
        <p class="error" role="alert">
          Line {parsed?.lines[Number(rowParam[1])] ?? '?'} of the file: {(start.error as Error).message}
        </p>
      ) : (
        <ErrorBox
          error={
            start.error && !['agentId', 'name', 'from', 'timeZone', 'maxConcurrency'].some(err) ? start.error : null
          }
        />
      )}
      <button type="submit" class="primary" disabled={!ready || !estimate || start.busy}>
        Start the campaign
      </button>
      {!estimate && ready ? <span class="muted"> Estimate the cost first.</span> : null}
    </form>
  );
}

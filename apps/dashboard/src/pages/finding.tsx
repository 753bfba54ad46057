import type { Finding, Fix, SuggestedContract } from '@errata/domain';
import type { PageProps } from '../app';
import { PageHeader, Stat } from '../components/figures';
import { Link } from '../components/link';
import { Await, CopyBlock } from '../components/states';
import { counted, formatCount, formatDateTime, formatDuration, formatPercent, labelOf } from '../format';
import { filterQuery, reportParams } from '../route';
import { fixProgress } from '../fix-steps';
import { useApi } from '../use-api';
import { TimelineLink } from '../components/timeline-link';
import { ServerTool } from '../components/name';

interface FindingDetail extends Finding {
  readonly suggestedContract: SuggestedContract;
  readonly fix: Fix | null;
  readonly deliveries: {
    readonly pending: number;
    readonly delivered: number;
    readonly dead: number;
    readonly disabled: number;
    readonly latest: {
      readonly status: string;
      readonly attempts: number;
      readonly lastStatus: number | null;
      readonly createdAt: string | null;
    } | null;
  };
}

export function FindingPage({ id, filters, query }: PageProps & { id: string }) {
  const finding = useApi<FindingDetail>(`/api/v1/findings/${encodeURIComponent(id)}`, reportParams(filters));
  const title =
    finding.state === 'ready' ? (
      <>
        {labelOf(finding.data.rule)}: <ServerTool server={finding.data.server} tool={finding.data.tool} />
      </>
    ) : (
      'Finding'
    );
  return (
    <section aria-labelledby="page-title">
      <p class="breadcrumb">
        <Link href={`/findings${filterQuery(query, ['rule', 'offset'])}`}>← All findings</Link>
      </p>
      <PageHeader title={title}>
        {finding.state === 'ready' ? finding.data.suggestedContract.summary : null}
      </PageHeader>
      <Await loaded={finding} what="the finding" retry={finding.retry}>
        {(finding) => (
          <>
            <div class="stats stats-compact">
              <Stat
                id="count"
                label="Offences"
                value={finding.count}
                detail={`${formatPercent(finding.rate)} of calls`}
              />
              <Stat
                id="wasted-retries"
                label="Wasted retries"
                value={finding.wastedRetries}
                detail={`${formatDuration(finding.wastedMs)} wasted`}
              />
              <Stat id="escalations-caused" label="Escalations caused" value={finding.escalationsCaused} />
              <Stat
                id="first-seen"
                label="First seen"
                text
                value={null}
                display={formatDateTime(finding.firstSeen)}
                detail={`last ${formatDateTime(finding.lastSeen)}`}
              />
            </div>
            <FixStatus fix={finding.fix} deliveries={finding.deliveries} />
            <h2>Evidence</h2>
            <ul class="evidence" data-list="evidence">
              {Object.entries(finding.evidence).map(([evidence, n]) => (
                <li key={evidence} data-value={n}>
                  <code>{evidence}</code> <strong>{formatCount(n)}</strong>
                </li>
              ))}
            </ul>
            {finding.serverVersions.length > 0 && (
              <p class="muted">Server versions: {finding.serverVersions.join(', ')}</p>
            )}
            <h2>Samples (redacted)</h2>
            <ul class="samples">
              {finding.samples.map((sample) => (
                <li key={sample.spanId}>
                  <time dateTime={sample.startTime}>{formatDateTime(sample.startTime)}</time>{' '}
                  <code>{sample.evidence}</code>
                  {sample.text !== null && <q class="sample-text">{sample.text}</q>}
                  <TimelineLink sample={sample} query={query} />
                </li>
              ))}
            </ul>
            <h2>Suggested contract</h2>
            {finding.suggestedContract.result !== null && (
              <CopyBlock
                label="Return this result instead"
                text={JSON.stringify(finding.suggestedContract.result, null, 2)}
              />
            )}
            {finding.suggestedContract.reportAttributes !== null && (
              <CopyBlock
                label="Send these subagent-report attributes"
                text={JSON.stringify(finding.suggestedContract.reportAttributes, null, 2)}
              />
            )}
            <CopyBlock
              label="Handler (TypeScript, @modelcontextprotocol/sdk)"
              text={finding.suggestedContract.handler}
            />
          </>
        )}
      </Await>
    </section>
  );
}

function FixStatus({ fix, deliveries }: { fix: Fix | null; deliveries: FindingDetail['deliveries'] }) {
  if (fix === null) {
    return (
      <div class="fix-status" data-fix-state="none">
        <h2>Fix</h2>
        <p class="muted">
          No fix has been suggested to an owner yet. Errata pushes one when the server has an owner (
          <code>npm run errata -- owners add</code>) and the finding has enough calls behind it.
        </p>
      </div>
    );
  }
  const { steps, regression } = fixProgress(fix);
  return (
    <div class="fix-status" data-fix-state={fix.state}>
      <h2>Fix: {labelOf(fix.state)}</h2>
      <ol class="steps">
        {steps.map(({ step, at, done }) => (
          <li
            key={step}
            data-step={step}
            data-done={done ? 'true' : 'false'}
            class={done ? 'done' : ''}
            aria-current={fix.state === step ? 'step' : undefined}
          >
            {labelOf(step)}
            {at !== null ? (
              <time dateTime={at}> {formatDateTime(at)}</time>
            ) : (
              <span class="visually-hidden"> (not yet)</span>
            )}
          </li>
        ))}
        {regression && (
          <li key="regressed" data-step="regressed" data-done="true" class="regressed">
            Regressed <time dateTime={regression.at}> {formatDateTime(regression.at)}</time>
          </li>
        )}
      </ol>
      {regression && (
        <p class="warning" data-regression>
          {regression.reverified
            ? `Regressed ${formatDateTime(regression.at)}, then verified again in ${fix.verifiedVersion ?? 'a later version'}.`
            : `Regressed ${formatDateTime(regression.at)}: the rule is broken again in a version after the fix` +
              (fix.deliveredAt !== null && Date.parse(fix.deliveredAt) > Date.parse(regression.at)
                ? '; the owner has been notified again.'
                : '.')}
        </p>
      )}
      <p data-deliveries>
        Webhook deliveries: {formatCount(deliveries.delivered)} delivered, {formatCount(deliveries.pending)}{' '}
        pending, {formatCount(deliveries.dead)} failed
        {deliveries.disabled > 0 ? `, ${formatCount(deliveries.disabled)} to disabled owners` : ''}
        {deliveries.latest !== null && deliveries.latest.status !== 'delivered' && (
          <span class="muted">
            {' '}
            · latest: {counted(deliveries.latest.attempts, 'attempt')}
            {deliveries.latest.lastStatus !== null && `, last answer HTTP ${deliveries.latest.lastStatus}`}
          </span>
        )}
      </p>
    </div>
  );
}

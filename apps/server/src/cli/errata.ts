import 'reflect-metadata';
import { HttpException, Logger, type LogLevel } from '@nestjs/common';
import { parseArgs } from 'node:util';
import { escapeControls, parseIsoInstant } from '@errata/domain';
import { ConfigError, loadConfig } from '../config/app-config';
import { UtcConsoleLogger } from '../config/utc-console-logger';
import {
  DatabaseInUseError,
  EmbeddedStoreDamagedError,
  openMigratedDatabase,
  type Database,
} from '../database/database';
import { DatabaseUnreachableError, NewerDatabaseError } from '../database/migrations';
import type { KeyScope } from '../database/schema';
import { CheckpointRepository } from '../repositories/checkpoint.repository';
import { EventRepository } from '../repositories/event.repository';
import { ProjectRepository } from '../repositories/project.repository';
import { ApiKeyService, hashKey, KEY_SCOPES } from '../services/api-key.service';
import {
  NewerRulesVersion,
  ProjectorService,
  standaloneProjector,
  READ_MODELS_VERSION,
} from '../services/projector.service';
import { READ_MODELS_PROJECTION } from '../projections/projection-logs';
import { adoptRecordedDerivation } from '../projections/derivation-settings';
import { FINDING_ID, FINDING_ID_FORM } from '../http/findings-page';
import { DeliveryRepository } from '../repositories/delivery.repository';
import { FixRepository } from '../repositories/fix.repository';
import { RollupQueryRepository } from '../repositories/rollup-query.repository';
import { FindingsService } from '../services/findings.service';
import { LogRetentionRepository } from '../repositories/log-retention.repository';
import { LogRetentionService } from '../services/log-retention.service';
import { LogRedactionRepository } from '../repositories/log-redaction.repository';
import { LogRedactionService } from '../services/log-redaction.service';
import { OwnerRepository } from '../repositories/owner.repository';
import { OwnerService } from '../services/owner.service';
import { ProgressBar } from './progress-bar';

const USAGE = `Usage: npm run errata -- <command>

  migrate                                         apply pending migrations
  projections rebuild                             rebuild every read model from the event log
  events prune --before <date> [--project <name>] [--yes]
                                                  delete the traces whose every span started before <date>
                                                  (ISO-8601, UTC), then rebuild the read models; without --yes,
                                                  only say what would go
  events redact [--project <name>] [--yes]        redact every text of the event log again, as this Errata
                                                  redacts (a newer release may catch more than the one that
                                                  stored it), then rebuild the read models; without --yes,
                                                  only say how many events and texts would change
  projects create <name>                          create a project
  projects list                                   list projects
  projects settings --project <name> [--store-arguments on|off]
                                                  show a project's settings, or change them: whether it keeps
                                                  its tool calls' raw arguments (redacted; off by default)
  keys create --project <name> --scope <scope> [--label <text>]
                                                  create a key (ingest | read | admin); printed once
  keys list --project <name>                      list a project's keys (prefixes only)
  keys revoke (--id <key id> | --key <key>)       revoke a key
  owners add --project <name> --server <name> --url <webhook url> [--version-range <range>] [--contact <text>]
                                                  register who owns an MCP server; prints the signing secret once
  owners list --project <name>                    list the owners of MCP servers
  fixes list --project <name>                     list suggested fixes and where they stand
  fixes acknowledge --project <name> --finding <id>
                                                  record that the owner acknowledged a fix

The database is DATABASE_URL, or the embedded PGlite in ERRATA_DATA_DIR (default ./.errata).`;

const COMMANDS = [
  'migrate',
  'projections rebuild',
  'events prune',
  'events redact',
  'projects create',
  'projects list',
  'projects settings',
  'keys create',
  'keys list',
  'keys revoke',
  'owners add',
  'owners list',
  'fixes list',
  'fixes acknowledge',
];

/** A mistake in how the CLI was called (exit 2, no stack trace); `withUsage` prints the usage after it. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly withUsage = false,
  ) {
    super(message);
  }
}

/**
 * Every line the CLI writes for a person holds names and texts from spans, from whoever registered them (server names,
 * tools, contacts, labels) or from the command line (a project name, an unknown command): their control characters
 * are escaped, line breaks included, or the terminal would run them (retitle, clear the screen, forge a line, turn
 * text around with a bidi override). Results, notes, warnings and errors alike go through here.
 */
function writeLine(stream: NodeJS.WriteStream, line: string): void {
  stream.write(`${escapeControls(line)}\n`);
}

/**
 * The CLI's stdout is its own (scripts read keys and lists from it): what the services log goes to stderr, its
 * messages escaped as `writeLine` escapes (they name servers and tools too).
 */
class StderrLogger extends UtcConsoleLogger {
  protected override printMessages(messages: unknown[], context?: string, logLevel?: LogLevel): void {
    const escaped = messages.map((message) =>
      typeof message === 'string' ? escapeControls(message) : message,
    );
    super.printMessages(escaped, context, logLevel, 'stderr');
  }

  protected override printStackTrace(stack: string): void {
    if (stack) for (const line of stack.split('\n')) writeLine(process.stderr, line);
  }
}

async function main(argv: string[]): Promise<void> {
  Logger.overrideLogger(new StderrLogger());
  const { positionals, values, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: {
      project: { type: 'string' },
      scope: { type: 'string' },
      label: { type: 'string' },
      id: { type: 'string' },
      key: { type: 'string' },
      server: { type: 'string' },
      url: { type: 'string' },
      'version-range': { type: 'string' },
      contact: { type: 'string' },
      finding: { type: 'string' },
      before: { type: 'string' },
      'store-arguments': { type: 'string' },
      yes: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.slice(0, 2).join(' ');
  if (values.help || positionals.length === 0 || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Before the database is opened: a typo must not create an embedded store, or wait for an unreachable server.
  if (!COMMANDS.includes(command)) {
    const subcommands = COMMANDS.filter((known) => known.startsWith(`${positionals[0]} `));
    if (positionals.length === 1 && subcommands.length > 0) {
      const names = subcommands.map((known) => known.split(' ')[1]).join(', ');
      throw new UsageError(`${positionals[0]} needs a subcommand: ${names}`, true);
    }
    throw new UsageError(`unknown command "${positionals.join(' ')}"`, true);
  }
  // The last of a repeated option would win silently (`--scope read --scope admin` made an admin key).
  const given = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    if (given.has(token.name)) throw new UsageError(`--${token.name} must be given once`);
    given.add(token.name);
  }
  // Every command migrates first; stdout stays the command's own (scripts read keys from it): what was applied goes
  // to stderr, except for `migrate`, whose own output it is.
  let applied: readonly string[] = [];
  // No bound on how long a statement runs, neither ERRATA_PG_QUERY_TIMEOUT_MS (the server's) nor one set on the role
  // or the database: a rebuild, a prune or a redaction over a large log has statements that run for minutes, and a
  // person watching stops one that hangs.
  const database = await openMigratedDatabase(
    loadConfig(),
    (names) => {
      applied = names;
      if (command !== 'migrate') writeLine(process.stderr, `applied migrations ${names.join(', ')}`);
    },
    'unbounded',
    (line) => writeLine(process.stderr, line),
  );
  try {
    await run(command, positionals, values, database, applied);
  } finally {
    await database.destroy();
  }
}

async function run(
  command: string,
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
  database: Database,
  applied: readonly string[],
): Promise<void> {
  const projects = new ProjectRepository(database);
  const out = (line: string) => writeLine(process.stdout, line);
  // Said on stderr, so that a script reading the list on stdout gets an empty one.
  const note = (line: string) => writeLine(process.stderr, line);
  switch (command) {
    case 'migrate': {
      out(
        applied.length === 0
          ? `migrations up to date (${database.description})`
          : `applied migrations ${applied.join(', ')} (${database.description})`,
      );
      const projected = await new CheckpointRepository().get(database.db, READ_MODELS_PROJECTION);
      if (projected !== null && projected.version < READ_MODELS_VERSION)
        note(
          `the read models are at rules version ${projected.version}, this Errata's is ${READ_MODELS_VERSION}: the ` +
            'server rebuilds them from the log when it starts (its reports hold part of the history until then); ' +
            '`errata projections rebuild` does it now, with progress',
        );
      return;
    }
    case 'projections rebuild':
      await rebuildReadModels(database, out, await projectorFor(database), true);
      return;
    case 'events prune': {
      const given = required<string>(values.before, '--before <date>');
      const before = parseIsoInstant(given);
      if (before === null)
        throw new UsageError(
          `--before must be an ISO-8601 date or date-time (UTC when it has no offset), not "${given}"`,
        );
      const project = values.project === undefined ? null : await existingProject(projects, values.project);
      const projector = await projectorFor(database);
      // Before anything is looked at or deleted: the rebuild a prune ends with is a newer Errata's to run.
      await projector.refuseNewerRules();
      const retention = new LogRetentionService(database, new LogRetentionRepository(database), projector);
      const traces = await retention.endedBefore(before, project?.id ?? null);
      const of = project === null ? 'all projects' : `project "${project.name}"`;
      const what = `${counted(traces.length, 'trace')} (${of}) whose every span started before ${before.toISOString()}`;
      if (traces.length === 0) {
        out(`nothing to delete: no trace (${of}) has every span starting before ${before.toISOString()}`);
        // An earlier prune cut off in its rebuild left the read models to rebuild: finish it (with --yes only: a
        // look without it changes nothing).
        if (values.yes === true && (await projector.rebuilding()))
          await rebuildReadModels(database, out, projector, false);
        return;
      }
      if (values.yes !== true) {
        const spans = traces.reduce((sum, trace) => sum + trace.events + trace.edges, 0);
        out(`would delete ${what} (${spans} events and span edges); run again with --yes to delete them`);
        return;
      }
      const progress = new ProgressBar('deleting traces', traces.length);
      const pruned = await retention.prune(traces, before, project?.id ?? null, (done) =>
        progress.update(done),
      );
      progress.finish(traces.length);
      out(
        `deleted ${what} (${counted(pruned.events, 'event')}, ${counted(pruned.edges, 'span edge')}) and ` +
          `${counted(pruned.ingestRecords, 'record')} of OTLP requests received before then`,
      );
      // The deletion began the rebuild: project it here (a running server shares the work).
      await rebuildReadModels(database, out, projector, false);
      return;
    }
    case 'events redact': {
      const project = values.project === undefined ? null : await existingProject(projects, values.project);
      const projector = await projectorFor(database);
      // Before anything is read or rewritten: the rebuild it ends with is a newer Errata's to run.
      await projector.refuseNewerRules();
      const redaction = new LogRedactionService(
        loadConfig(),
        database,
        new LogRedactionRepository(database),
        projector,
      );
      const projectId = project?.id ?? null;
      const of = project === null ? 'all projects' : `project "${project.name}"`;
      const reading = new ProgressBar('reading the event log', await redaction.count(projectId));
      const survey = await redaction.survey(projectId, (scanned) => reading.update(scanned));
      reading.finish(survey.scanned);
      if (survey.events === 0 && survey.messages === 0) {
        out(
          `nothing to redact: every text in the event log (${of}; ${counted(survey.scanned, 'event')} read) is redacted as this Errata redacts`,
        );
        // An earlier run cut off in its rebuild left the read models to rebuild: finish it (with --yes only).
        if (values.yes === true && (await projector.rebuilding()))
          await rebuildReadModels(database, out, projector, false);
        return;
      }
      const messages = (n: number) => (n === 0 ? '' : ` and the samples of ${counted(n, 'webhook message')}`);
      const what = `${counted(survey.texts, 'text')} in ${counted(survey.events, 'event')} (${of}; ${survey.scanned} read)${messages(survey.messages)}`;
      if (values.yes !== true) {
        out(`would redact again ${what}; run again with --yes to rewrite them`);
        return;
      }
      const progress = new ProgressBar('redacting events', survey.events);
      const redacted = await redaction.redact(survey, projectId, (done) => progress.update(done));
      progress.finish(redacted.events);
      out(
        `redacted again ${counted(redacted.texts, 'text')} in ${counted(redacted.events, 'event')} (${of})${messages(redacted.messages)}`,
      );
      // The last batch began the rebuild: project it here (a running server shares the work).
      if (survey.events > 0) await rebuildReadModels(database, out, projector, false);
      return;
    }
    case 'projects create': {
      const name = required(positionals[2], 'a project name');
      if (await projects.findProject(name)) throw new UsageError(`project "${name}" already exists`);
      const project = await projects.createProject(name);
      out(`created project "${project.name}"`);
      return;
    }
    case 'projects settings': {
      let project = await existingProject(projects, values.project);
      const store = values['store-arguments'];
      if (store !== undefined) {
        if (store !== 'on' && store !== 'off') throw new UsageError('--store-arguments must be on or off');
        project = await projects.setStoreArguments(project.id, store === 'on');
      }
      out(`project "${project.name}"`);
      out(
        project.storeArguments
          ? "store-arguments on: tool calls' raw arguments are kept, redacted and cut, beside their hash"
          : "store-arguments off: only a hash and the size of tool calls' arguments are kept (any kept before are " +
              'not shown, and leave with their traces: events prune)',
      );
      if (store !== undefined) note('ingest keys already in use take the change within 5 seconds');
      return;
    }
    case 'projects list':
      for (const name of await projects.listProjectNames()) out(name);
      return;
    case 'keys create': {
      const project = await existingProject(projects, values.project);
      const scope = required(values.scope, '--scope') as KeyScope;
      if (!KEY_SCOPES.includes(scope))
        throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}`);
      const label = typeof values.label === 'string' ? values.label : null;
      const created = await new ApiKeyService(projects).create(project.id, scope, 'cli', label);
      out(`created ${scope} key ${created.id} for project "${project.name}" (shown only now):`);
      out(created.key);
      return;
    }
    case 'keys list': {
      const project = await existingProject(projects, values.project);
      for (const key of await projects.listKeys(project.id)) {
        const state = key.revokedAt ? `revoked ${new Date(key.revokedAt).toISOString()}` : 'live';
        out(
          `${key.id}  ${key.scope.padEnd(6)}  ${key.keyPrefix}…  ${key.managedBy.padEnd(9)}  ${state}  ${key.label ?? ''}`,
        );
      }
      return;
    }
    case 'keys revoke': {
      const { id, key } = values;
      if (typeof id === 'string' && !/^[0-9a-f-]{36}$/i.test(id))
        throw new UsageError('--id must be a key id (a UUID)');
      const revoked =
        typeof id === 'string'
          ? await projects.revokeKey({ id })
          : typeof key === 'string'
            ? await projects.revokeKey({ keyHash: hashKey(key) })
            : null;
      if (!revoked) throw new UsageError('keys revoke needs --id <key id> or --key <key>');
      if (revoked.length === 0) throw new UsageError('no live key matches');
      for (const key of revoked) out(`revoked ${key.scope} key ${key.id} (${key.keyPrefix}…)`);
      return;
    }
    case 'owners add': {
      const project = await existingProject(projects, values.project);
      const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : null);
      const owner = await new OwnerService(loadConfig(), new OwnerRepository(database)).register(project.id, {
        serverName: required(values.server, '--server <name>') as string,
        webhookUrl: required(values.url, '--url <webhook url>') as string,
        versionRange: text('version-range'),
        contact: text('contact'),
      });
      out(`registered owner ${owner.id} of server "${owner.serverName}" → ${owner.webhookUrl}`);
      out(`signing secret (shown only now): ${owner.secret}`);
      return;
    }
    case 'owners list': {
      const project = await existingProject(projects, values.project);
      const owners = await new OwnerService(loadConfig(), new OwnerRepository(database)).list(project.id);
      if (owners.length === 0) note(`project "${project.name}" has no owners yet; add one with: owners add`);
      for (const owner of owners) {
        const state = owner.disabledAt ? `disabled ${owner.disabledAt} (${owner.disabledReason})` : 'enabled';
        out(
          `${owner.id}  ${owner.serverName} ${owner.versionRange ?? '(all versions)'}  ${owner.webhookUrl}  ${state}`,
        );
      }
      return;
    }
    case 'fixes list': {
      const project = await existingProject(projects, values.project);
      const fixes = await new FixRepository(database).list(project.id);
      if (fixes.length === 0) {
        note(
          `project "${project.name}" has no fixes yet: a finding becomes a fix once its server has an owner ` +
            '(owners add) and the next fix round runs (ERRATA_FIX_INTERVAL_MS)',
        );
      }
      for (const fix of fixes) {
        out(
          `${fix.findingId}  ${fix.state.padEnd(12)}  ${fix.rule}  ${fix.server ?? '(subagent)'}/${fix.tool}`,
        );
      }
      return;
    }
    case 'fixes acknowledge': {
      const project = await existingProject(projects, values.project);
      const findingId = required(values.finding, '--finding <id>') as string;
      if (!FINDING_ID.test(findingId))
        throw new UsageError(`--finding must be a finding id (${FINDING_ID_FORM})`);
      const fixes = new FixRepository(database);
      const acknowledged = await fixes.acknowledge(project.id, findingId, 'cli');
      if (acknowledged === null) {
        const findings = new FindingsService(
          new RollupQueryRepository(database),
          fixes,
          new DeliveryRepository(database),
          new EventRepository(database),
        );
        // An id that names no finding is a typo or another project's, not a fix still to be suggested.
        throw new UsageError(
          (await findings.exists(project.id, findingId))
            ? `no fix for finding ${findingId} in project "${project.name}" (Errata suggests one only to an ` +
                `owner registered for its server: errata owners add)`
            : `no finding ${findingId} in project "${project.name}" (GET /api/v1/findings lists the ids there are)`,
        );
      }
      const { fix, recorded } = acknowledged;
      const what = `the fix for ${findingId} (${fix.rule} on ${fix.server ?? '(subagent)'}/${fix.tool})`;
      out(
        recorded
          ? `acknowledged ${what}`
          : `${what} was acknowledged already, by ${fix.acknowledgedBy} at ${fix.acknowledgedAt}: nothing recorded`,
      );
      return;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`, true);
  }
}

const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A projector that derives with the settings the read models were derived with (the server's), not the CLI's own. */
async function projectorFor(database: Database): Promise<ProjectorService> {
  const recorded =
    (await new CheckpointRepository().get(database.db, READ_MODELS_PROJECTION))?.derivation ?? null;
  const config = adoptRecordedDerivation(loadConfig(), recorded, process.env, (line) =>
    writeLine(process.stderr, line),
  );
  return standaloneProjector(config, database);
}

/** Rebuilds the read models with a progress bar: from the log's start (`begin`), or where a rebuild under way stands. */
async function rebuildReadModels(
  database: Database,
  out: (line: string) => void,
  projector: ProjectorService,
  begin: boolean,
): Promise<void> {
  const events = new EventRepository(database);
  const total = (await events.count()) + (await events.countEdges());
  const progress = new ProgressBar('rebuilding read models and rollups', total);
  const onProgress = (done: number) => progress.update(done);
  const applied = begin ? await projector.rebuild(onProgress) : await projector.settle(onProgress);
  progress.finish(applied);
  out(
    applied >= total
      ? `rebuilt read models and rollups from ${applied} events and span edges`
      : `rebuilt read models and rollups from ${total} events and span edges (${applied} applied here, ` +
          'the rest by a running Errata server)',
  );
}

function required<T>(value: T | undefined | boolean, what: string): T {
  if (value === undefined || value === '' || typeof value === 'boolean')
    throw new UsageError(`missing ${what}`);
  return value as T;
}

async function existingProject(projects: ProjectRepository, name: string | boolean | undefined) {
  const projectName = required(name, '--project <name>') as string;
  const project = await projects.findProject(projectName);
  if (!project) {
    throw new UsageError(
      `project "${projectName}" does not exist; create it with: npm run errata -- projects create ${projectName}`,
    );
  }
  return project;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof UsageError ||
    error instanceof HttpException || // a service refusing bad input (BadRequestException …)
    error instanceof ConfigError ||
    error instanceof DatabaseInUseError ||
    error instanceof EmbeddedStoreDamagedError ||
    error instanceof DatabaseUnreachableError ||
    error instanceof NewerDatabaseError ||
    error instanceof NewerRulesVersion ||
    ['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'].includes(
      (error as { code?: string })?.code ?? '',
    );
  // The message names what was given or stored (a project, a server, an option): one escaped line. An unexpected
  // error's stack follows it, a line per frame.
  if (!(error instanceof Error)) writeLine(process.stderr, `errata: ${String(error)}`);
  else if (known) writeLine(process.stderr, `errata: ${error.message}`);
  else {
    const head = `${error.name}: ${error.message}`;
    writeLine(process.stderr, `errata: ${head}`);
    const stack = error.stack ?? '';
    const frames = stack.startsWith(head) ? stack.slice(head.length) : `\n${stack}`;
    for (const line of frames.split('\n').slice(1)) writeLine(process.stderr, line);
  }
  if (error instanceof UsageError && error.withUsage) process.stderr.write(`\n${USAGE}\n`);
  process.exit(known ? 2 : 1);
});

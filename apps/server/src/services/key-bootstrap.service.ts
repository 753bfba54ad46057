import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { jsonLogLine } from '../config/json-log-line';
import type { KeyScope } from '../database/schema';
import { ProjectRepository } from '../repositories/project.repository';
import { aKeyOf, ApiKeyService, envKeyPrefix, hashKey } from './api-key.service';

export const DEFAULT_PROJECT = 'default';

/**
 * Makes sure someone can use a fresh install. With ERRATA_INGEST_KEY / ERRATA_READ_KEY set, project `default`
 * gets exactly those keys for those scopes (earlier env or bootstrap keys of the scope are revoked; keys made
 * with the CLI stay), before any request is served. Otherwise the first start on an empty database creates
 * `default` and prints its keys once, when the server listens (`createFirstKeys`): a start that fails before, on a
 * port already taken, must not leave the only copy of the keys in the output of a run that failed.
 */
@Injectable()
export class KeyBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Keys');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly projects: ProjectRepository,
    private readonly keys: ApiKeyService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const configured: [KeyScope, string | null][] = [
      ['ingest', this.config.ingestKey],
      ['read', this.config.readKey],
    ];
    const envKeys = configured.filter((entry): entry is [KeyScope, string] => entry[1] !== null);
    if (envKeys.length > 0) await this.applyEnvKeys(envKeys);
  }

  /** Once the server listens: on an empty database without env keys, creates `default` and prints its keys. */
  async createFirstKeys(): Promise<void> {
    if (this.config.ingestKey !== null || this.config.readKey !== null) return;
    const created = await this.createFirstProject();
    if (created) printFirstKeys(created, this.config.logFormat, this.config.databaseUrl === null);
  }

  private async applyEnvKeys(envKeys: readonly (readonly [KeyScope, string])[]): Promise<void> {
    await this.projects.transaction(async (projects) => {
      await projects.lockKeySetup();
      const project = await projects.ensureProject(DEFAULT_PROJECT);
      for (const [scope, key] of envKeys) {
        const keyHash = hashKey(key);
        const owner = await projects.findLiveKeyByHash(keyHash);
        if (owner && (owner.projectId !== project.id || owner.scope !== scope)) {
          throw new Error(
            `ERRATA_${scope.toUpperCase()}_KEY is already ${aKeyOf(owner.scope)} of project ${owner.projectName}`,
          );
        }
        const keyPrefix = envKeyPrefix(keyHash);
        if (!(await projects.reviveEnvKey(project.id, scope, keyHash, keyPrefix))) {
          await projects.insertKey({
            projectId: project.id,
            scope,
            keyHash,
            keyPrefix,
            managedBy: 'env',
            label: `ERRATA_${scope.toUpperCase()}_KEY`,
          });
        }
        const revoked = await projects.revokeManagedKeysExcept(project.id, scope, keyHash);
        // Said, because an agent still sending a revoked key is only refused (401), with nothing in this log.
        if (revoked.length > 0) {
          const which = revoked.map((key) => `${key.keyPrefix}… (${key.managedBy})`).join(', ');
          this.logger.warn(
            `ERRATA_${scope.toUpperCase()}_KEY replaced the earlier ${scope} key${revoked.length === 1 ? '' : 's'} of ` +
              `project ${DEFAULT_PROJECT}, now revoked: ${which}; whatever still sends ${revoked.length === 1 ? 'it' : 'them'} is refused (401)`,
          );
        }
      }
    });
  }

  /**
   * Project `default` and its three keys, in one transaction: a start cut off in between (killed, or its database
   * gone) leaves neither, and the next start makes and prints them. Committed apart, it left a project with no key
   * anybody had seen, and no start printed one again.
   */
  private createFirstProject() {
    return this.projects.transaction(async (projects) => {
      await projects.lockKeySetup(); // another instance starting at once makes them, or finds them made
      if ((await projects.countProjects()) > 0) return null;
      const project = await projects.ensureProject(DEFAULT_PROJECT);
      const created = [];
      for (const scope of ['ingest', 'read', 'admin'] as const) {
        created.push(
          await this.keys.create(project.id, scope, 'bootstrap', 'created at first start', projects),
        );
      }
      return { project: project.name, keys: created };
    });
  }
}

function printFirstKeys(
  created: { project: string; keys: { scope: string; key: string }[] },
  format: AppConfig['logFormat'],
  embedded: boolean,
): void {
  const message = `Created project "${created.project}". Its keys are shown only now; store them somewhere safe`;
  const moreKeys = 'npm run errata -- keys create --project default --scope read';
  // The embedded store opens in one process at a time: the CLI run beside this server is refused.
  const hint = `Send traces with: Authorization: Bearer <ingest key>. More keys: ${
    embedded
      ? `stop this server, then ${moreKeys} (the embedded store opens in one process at a time)`
      : moreKeys
  }`;
  if (format === 'json') {
    // One record like every other log line, so that a collector reading JSON lines takes it whole.
    const keys = Object.fromEntries(created.keys.map(({ scope, key }) => [scope, key]));
    process.stdout.write(jsonLogLine('log', 'Keys', message, { keys, hint }));
    return;
  }
  const lines = [`${message}:`, ...created.keys.map(({ scope, key }) => `  ${scope.padEnd(6)} ${key}`), hint];
  process.stdout.write(`${lines.join('\n')}\n`);
}

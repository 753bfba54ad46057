import { evolveFix, type FixEvent } from '@errata/domain';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from './support/cli';
import { createTestDatabase, type TestDatabase } from './support/postgres';

// Names as a span or a registration can carry them: a window-title OSC, a screen clear, colours, a forged line, C1
// and a bidi override.
const SERVER = 'ctl\u001b]0;OWNED-TITLE\u0007\u001b[2J\u001b[31mRED\u001b[0m\nFORGED LINE\u009b\u202e';
const TOOL = 'tool\u001b[31mRED\u001b[0m\nFORGED2';
const FINDING = 'a'.repeat(20);
/** What a terminal would act on; the line breaks ending each output line are the CLI's own. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('the CLI prints stored names with their control characters escaped', () => {
  let database: TestDatabase;
  const cli = (...args: string[]) => runCli(database.url, ...args);
  beforeAll(async () => {
    database = await createTestDatabase(inject('templateDatabase'));
  });
  afterAll(() => database.drop());

  it('owners, fixes, keys and projects lists show names as escapes, one line per entry', async () => {
    const project = 'p\u001b[2Jroject';
    expect((await cli('projects', 'create', project)).code).toBe(0);
    const added = await cli(
      'owners',
      'add',
      '--project',
      project,
      '--server',
      SERVER,
      '--url',
      'https://hooks.example.com/errata',
      '--contact',
      'ops\u001b[2J@example.com',
    );
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(
      (
        await cli(
          'keys',
          'create',
          '--project',
          project,
          '--scope',
          'read',
          '--label',
          'lab\u001b]0;T\u0007el',
        )
      ).code,
    ).toBe(0);
    // A fix as the fix round records it, for the server and tool the spans named.
    const suggested: FixEvent = {
      type: 'FixSuggested',
      data: {
        findingId: FINDING,
        server: SERVER,
        tool: TOOL,
        rule: 'untyped-error',
        versions: [],
        at: new Date().toISOString(),
      },
    };
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: number }>('SELECT id FROM project WHERE name = $1', [
        project,
      ]);
      const projectId = rows[0]!.id;
      await client.query(
        'INSERT INTO fix_event (project_id, finding_id, type, data) VALUES ($1, $2, $3, $4)',
        [projectId, FINDING, suggested.type, suggested.data],
      );
      await client.query('INSERT INTO fix (project_id, finding_id, state, body) VALUES ($1, $2, $3, $4)', [
        projectId,
        FINDING,
        'suggested',
        evolveFix(null, suggested),
      ]);
    } finally {
      await client.end();
    }

    const runs = {
      added,
      owners: await cli('owners', 'list', '--project', project),
      fixes: await cli('fixes', 'list', '--project', project),
      acknowledged: await cli('fixes', 'acknowledge', '--project', project, '--finding', FINDING),
      acknowledgedAgain: await cli('fixes', 'acknowledge', '--project', project, '--finding', FINDING),
      keys: await cli('keys', 'list', '--project', project),
      projects: await cli('projects', 'list'),
    };
    for (const [name, run] of Object.entries(runs)) {
      expect(run.code, name).toBe(0);
      expect(run.stdout, name).not.toMatch(RAW_CONTROL);
      expect(run.stderr, name).not.toMatch(RAW_CONTROL);
    }
    const server =
      'ctl\\u001b]0;OWNED-TITLE\\u0007\\u001b[2J\\u001b[31mRED\\u001b[0m\\u000aFORGED LINE\\u009b\\u202e';
    const tool = 'tool\\u001b[31mRED\\u001b[0m\\u000aFORGED2';
    expect(runs.owners.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringContaining(`  ${server} (all versions)  https://hooks.example.com/errata  enabled`),
    ]);
    expect(runs.fixes.stdout).toBe(`${FINDING}  suggested     untyped-error  ${server}/${tool}\n`);
    expect(runs.acknowledged.stdout).toBe(
      `acknowledged the fix for ${FINDING} (untyped-error on ${server}/${tool})\n`,
    );
    // Once is enough: the second says who acknowledged it and when, and records nothing
    const again = runs.acknowledgedAgain.stdout;
    expect(again.split(', by cli at ')[0]).toBe(
      `the fix for ${FINDING} (untyped-error on ${server}/${tool}) was acknowledged already`,
    );
    expect(again).toMatch(/, by cli at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z: nothing recorded\n$/);
    expect(runs.added.stdout).toContain(`of server "${server}"`);
    expect(runs.keys.stdout).toContain('lab\\u001b]0;T\\u0007el');
    expect(runs.projects.stdout).toContain('p\\u001b[2Jroject\n');
  });

  it('error lines echo names from the command line and from storage escaped, one line each', async () => {
    const project = 'errors\u202e\u001b]0;T\u0007';
    const shown = 'errors\\u202e\\u001b]0;T\\u0007';
    const server =
      'ctl\\u001b]0;OWNED-TITLE\\u0007\\u001b[2J\\u001b[31mRED\\u001b[0m\\u000aFORGED LINE\\u009b\\u202e';
    expect((await cli('projects', 'create', project)).code).toBe(0);
    const owner = [
      'owners',
      'add',
      '--project',
      project,
      '--server',
      SERVER,
      '--url',
      'https://hooks.example.com/e',
    ];
    expect((await cli(...owner)).code).toBe(0);
    const [again, duplicate, missing, command, option, before] = await Promise.all([
      cli('projects', 'create', project),
      cli(...owner),
      cli('keys', 'list', '--project', `${project}-missing`),
      cli('frob\u001b[2Jnicate'),
      cli('keys', 'list', '--evil\u001b[2J'),
      cli('events', 'prune', '--before', 'soon\u001b]0;T\u0007\nFORGED'),
    ]);
    for (const [name, run] of Object.entries({ again, duplicate, missing, command, option, before })) {
      expect(run.code, name).toBe(2);
      expect(run.stderr, name).not.toMatch(RAW_CONTROL);
    }
    expect(again.stderr).toBe(`errata: project "${shown}" already exists\n`);
    expect(duplicate.stderr).toMatch(
      new RegExp(`^errata: server "${escapeRegExp(server)}" already has .*\n$`),
    );
    expect(missing.stderr).toBe(
      `errata: project "${shown}-missing" does not exist; create it with: npm run errata -- projects create ${shown}-missing\n`,
    );
    expect(command.stderr).toMatch(/^errata: unknown command "frob\\u001b\[2Jnicate"\n\nUsage: /);
    expect(option.stderr).toContain('--evil\\u001b[2J');
    expect(before.stderr).toBe(
      'errata: --before must be an ISO-8601 date or date-time (UTC when it has no offset), not "soon\\u001b]0;T\\u0007\\u000aFORGED"\n',
    );
  });
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

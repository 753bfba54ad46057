/**
 * What `toolErrorAttributes` promises of anything a failed `callTool` may throw, checked on generated errors
 * (fast-check): nothing leaves the process unredacted or longer than its limit, whatever the host's code or name.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedText } from '@errata/domain';
import { toolErrorAttributes } from './tool-error';

const SECRET = 'sk-abcdefghijklmnopqrstuvwxyz0123456789';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('ECONNREFUSED', `token ${SECRET}`, 'x'.repeat(3000), 'MCP error -32602: bad', ''),
);

/** What a host or library may throw: Errors with any code, name and cause, McpError-like objects, other values. */
const thrown = fc.oneof(
  fc.record({ message: text, code: fc.oneof(text, fc.integer({ min: -40000, max: 600 })), name: text }),
  fc.record({ message: text, name: text, cause: fc.record({ code: text }) }),
  fc
    .tuple(text, fc.integer({ min: -32700, max: -32000 }))
    .map(([message, code]) => Object.assign(new Error(`MCP error ${code}: ${message}`), { code })),
  text.map((message) => new Error(message)),
  text,
  fc.constantFrom(null, undefined, 42),
);

const options = fc.record({
  textLimitBytes: fc.integer({ min: 16, max: 4096 }),
  aborted: fc.boolean(),
  abortReason: fc.option(fc.record({ name: text })),
  raisedByClient: fc.boolean(),
});

describe('toolErrorAttributes, on anything thrown', () => {
  it('sends every text redacted and within its limit: error.type within a name (256 bytes), the message within the text limit', () => {
    fc.assert(
      fc.property(thrown, options, (error, given) => {
        const { attributes, message } = toolErrorAttributes(error, given);
        expect(Buffer.byteLength(message)).toBeLessThanOrEqual(given.textLimitBytes);
        expect(message).not.toContain(SECRET);
        const type = attributes['error.type'];
        expect(typeof type === 'string' && type !== '').toBe(true);
        expect(Buffer.byteLength(String(type))).toBeLessThanOrEqual(256);
        expect(storedText(String(type), 256)).toBe(type);
        for (const value of Object.values(attributes)) {
          if (typeof value === 'string') expect(value).not.toContain(SECRET);
        }
      }),
      { numRuns: 500 },
    );
  });
});

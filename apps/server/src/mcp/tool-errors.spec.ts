import { BadRequestException, Logger } from '@nestjs/common';
import { beforeAll, describe, expect, it } from 'vitest';
import { sdkToolError, toolError } from './tool-errors';

beforeAll(() => Logger.overrideLogger(false));

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('the error an MCP tool of Errata answers with', () => {
  it('says "retry later" only when the database is unreachable', () => {
    for (const error of [
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(toolError(error)).toMatchObject({
        errorCategory: 'transient',
        isRetryable: true,
        code: 'ERRATA_UNAVAILABLE',
      });
    }
  });

  it('says "retry later" when PostgreSQL cut a statement off at ERRATA_PG_QUERY_TIMEOUT_MS, as for a stall', () => {
    for (const error of [
      withCode('canceling statement due to statement timeout', '57014'),
      new Error('Query read timeout'),
    ]) {
      expect(toolError(error)).toMatchObject({
        errorCategory: 'transient',
        isRetryable: true,
        code: 'ERRATA_UNAVAILABLE',
      });
    }
  });

  it("calls any other failure Errata's own, which retrying the same request will not fix", () => {
    // Memory or disk exhausted: the same request may hit them every time.
    for (const code of ['53200', '53100']) {
      expect(toolError(withCode('out of memory', code)).code).toBe('ERRATA_INTERNAL_ERROR');
    }
    expect(
      toolError(withCode('value "-62167219200000000000" is out of range for type bigint', '22003')),
    ).toEqual({
      errorCategory: 'transient',
      isRetryable: false,
      code: 'ERRATA_INTERNAL_ERROR',
      description: expect.stringContaining('Retrying the same request will fail again') as string,
    });
    expect(toolError(new BadRequestException('"from" must be before "to"'))).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      isRetryable: true,
    });
  });

  it('tells a reason the SDK repeats once', () => {
    const line = 'Invalid input: expected string, received number at from';
    expect(
      sdkToolError(
        `MCP error -32602: Input validation error: Invalid arguments for tool get_retry_waste: ${line}\n${line}`,
      ).description,
    ).toBe(
      `Input validation error: Invalid arguments for tool get_retry_waste: ${line}. Correct the argument and retry.`,
    );
  });

  it("reads the MCP SDK's own answer to arguments the input schema refuses", () => {
    expect(
      sdkToolError(
        'MCP error -32602: Input validation error: Invalid arguments for tool get_retry_waste: bad',
      ),
    ).toEqual({
      errorCategory: 'validation',
      isRetryable: true,
      code: 'INVALID_ARGUMENTS',
      description:
        'Input validation error: Invalid arguments for tool get_retry_waste: bad. Correct the argument and retry.',
    });
  });
});

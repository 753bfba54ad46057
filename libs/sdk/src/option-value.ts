/**
 * Options a host passes from plain JavaScript, or through the environment, can hold anything. A wrong one never
 * stops the host: its default (or the next source) is used instead, and one `diag` warning names the option, the
 * value given and the value used.
 */
import { diag } from '@opentelemetry/api';
import { safeDiag } from './safe-diag';

/** What an option accepts: its reading of a value, undefined when the value is not one of them. */
export interface OptionKind<T> {
  /** For the warning: "must be …". */
  readonly expected: string;
  read(value: unknown): T | undefined;
  /** The value an environment variable's text stands for (`"30000"` → 30000). */
  parse(text: string): unknown;
}

/** A positive whole number; a fraction is rounded down, and must still be positive (0.5 would be 0). */
export const POSITIVE_INTEGER: OptionKind<number> = {
  expected: 'a number of at least 1',
  read: (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
    const whole = Math.floor(value);
    return whole > 0 ? whole : undefined;
  },
  parse: Number,
};

export const BOOLEAN: OptionKind<boolean> = {
  expected: 'true or false',
  read: (value) => (typeof value === 'boolean' ? value : undefined),
  parse: (text) => ({ true: true, false: false })[text.toLowerCase()],
};

/** One of `values`, in any case. */
export const oneOf = <T extends string>(values: readonly T[]): OptionKind<T> => ({
  expected: values.join(' or '),
  read: (value) => {
    const lower = typeof value === 'string' ? value.toLowerCase() : undefined;
    return values.find((accepted) => accepted === lower);
  },
  parse: (text) => text,
});

/** A value as a warning quotes it: a string in quotes, anything else as JSON where it can be. */
export const shown = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value); // a BigInt, a cycle
  }
};

function checked<T>(
  name: string,
  given: unknown,
  value: T | undefined,
  kind: OptionKind<T>,
  fallback: () => T,
): T {
  if (value !== undefined) return value;
  const used = fallback();
  const instead = used === undefined ? 'it is left out' : `${shown(used)} is used instead`;
  safeDiag(() => diag.warn(`@errata/sdk: ${name} must be ${kind.expected}; got ${shown(given)}; ${instead}`));
  return used;
}

/**
 * The option's value; `fallback()` when it is not given (undefined or null), or when it is not of its kind, which a
 * `diag` warning says. `fallback` is called only when needed: the next source may warn of its own value.
 */
export function optionValue<T>(name: string, given: unknown, kind: OptionKind<T>, fallback: () => T): T {
  if (given === undefined || given === null) return fallback();
  return checked(name, given, kind.read(given), kind, fallback);
}

/** An environment variable's value, as `optionValue`'s: unset or empty is not given. */
export function environmentValue<T>(name: string, kind: OptionKind<T>, fallback: () => T): T {
  const text = process.env[name]?.trim();
  if (text === undefined || text === '') return fallback();
  return checked(name, text, kind.read(kind.parse(text)), kind, fallback);
}

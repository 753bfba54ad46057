import type { AttributeValue } from '@errata/domain';

/** Writable while being filled; handed out as the readonly `Attributes`. */
export type MutableAttributes = Record<string, AttributeValue>;

/**
 * Plain assignment of the key "__proto__" would replace the object's prototype instead of storing
 * the sender's attribute, so that one key is defined as an ordinary own property.
 */
export function setAttribute(target: MutableAttributes, key: string, value: AttributeValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/**
 * Non-finite doubles have no JSON spelling and would silently become null once a span is stored as
 * JSON, so they are kept as the strings proto3 JSON uses for them.
 */
export function doubleAttribute(value: number): number | string {
  if (Number.isFinite(value)) return value;
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? 'Infinity' : '-Infinity';
}

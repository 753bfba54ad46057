import type { AttributeValue, Attributes } from '@errata/domain';
import { doubleAttribute, setAttribute, type MutableAttributes } from './attribute-object';
import { SpanRejection } from './errors';
import { describeJson, doubleFromJson, int64AttributeFromJson, isJsonObject } from './json-values';
import { attributeSizeProblem, quoteKey } from './validate-span';

/**
 * JSON.parse accepts nesting that a recursive walk cannot, so arrays and key-value lists are cut
 * off well before the stack runs out. (Protobuf nesting is bounded by protobufjs's reader limit.)
 */
const MAX_NESTING = 32;

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The top-level attribute being read: rejection reasons name it, including for problems deep
 * inside its value, since that is what the sender set. Reasons are only spelled out on failure.
 */
interface AttributeAt {
  readonly owner: string;
  readonly key: string;
}

/**
 * `owner` reads as "attribute" or "resource attribute" in rejection reasons. A value larger than
 * `maxValueBytes` rejects the span (or, for the resource, every span under it).
 */
export function attributesFromJson(keyValues: unknown, owner: string, maxValueBytes: number): Attributes {
  const attributes: MutableAttributes = {};
  const list = keyValueArray(keyValues, () => `${owner}s`);
  for (let i = 0; i < list.length; i++) {
    const key = keyOf(list[i], () => `${owner}s[${i}]`);
    const at = { owner, key };
    const value = anyValue((list[i] as { value?: unknown }).value, at, 0);
    setAttribute(attributes, key, value);
    const sizeProblem = attributeSizeProblem(owner, key, value, maxValueBytes);
    if (sizeProblem !== null) throw new SpanRejection(sizeProblem);
  }
  return attributes;
}

function keyValueArray(keyValues: unknown, where: () => string): readonly unknown[] {
  if (keyValues === undefined || keyValues === null) return [];
  if (Array.isArray(keyValues)) return keyValues;
  throw new SpanRejection(
    `${where()} must be an array of {"key", "value"} objects (got ${describeJson(keyValues)})`,
  );
}

function keyOf(keyValue: unknown, where: () => string): string {
  if (!isJsonObject(keyValue)) {
    throw new SpanRejection(`${where()} must be a {"key", "value"} object (got ${describeJson(keyValue)})`);
  }
  const key = keyValue.key;
  if (typeof key === 'string') return key;
  if (key === undefined || key === null) return '';
  throw new SpanRejection(`${where()}.key must be a string (got ${describeJson(key)})`);
}

function label(at: AttributeAt): string {
  return `${at.owner} ${quoteKey(at.key)}`;
}

function anyValue(value: unknown, at: AttributeAt, depth: number): AttributeValue {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value)) {
    throw new SpanRejection(
      `${label(at)} must have an AnyValue object as its value (got ${describeJson(value)})`,
    );
  }
  const stringValue = value.stringValue;
  if (typeof stringValue === 'string') return stringValue;
  if (stringValue !== undefined && stringValue !== null) {
    throw new SpanRejection(`${label(at)} stringValue must be a string (got ${describeJson(stringValue)})`);
  }
  if (value.boolValue !== undefined && value.boolValue !== null) {
    if (typeof value.boolValue === 'boolean') return value.boolValue;
    throw new SpanRejection(
      `${label(at)} boolValue must be true or false (got ${describeJson(value.boolValue)})`,
    );
  }
  if (value.intValue !== undefined && value.intValue !== null) {
    return int64AttributeFromJson(value.intValue, () => `${label(at)} intValue`);
  }
  if (value.doubleValue !== undefined && value.doubleValue !== null) {
    return doubleAttribute(doubleFromJson(value.doubleValue, () => `${label(at)} doubleValue`));
  }
  if (value.arrayValue !== undefined && value.arrayValue !== null) {
    const values = listValues(value.arrayValue, at, 'arrayValue', depth);
    return values.map((item) => anyValue(item, at, depth + 1));
  }
  if (value.kvlistValue !== undefined && value.kvlistValue !== null) {
    const values = listValues(value.kvlistValue, at, 'kvlistValue', depth);
    const nested: MutableAttributes = {};
    for (const keyValue of values) {
      const key = keyOf(keyValue, () => `${label(at)} kvlistValue.values[]`);
      setAttribute(nested, key, anyValue((keyValue as { value?: unknown }).value, at, depth + 1));
    }
    return nested;
  }
  if (value.bytesValue !== undefined && value.bytesValue !== null) {
    if (typeof value.bytesValue === 'string' && BASE64.test(value.bytesValue)) {
      // proto3 JSON bytes may be standard or URL-safe base64, padded or not; stored as standard.
      return Buffer.from(value.bytesValue, 'base64').toString('base64');
    }
    throw new SpanRejection(
      `${label(at)} bytesValue must be a base64 string (got ${describeJson(value.bytesValue)})`,
    );
  }
  return null;
}

function listValues(list: unknown, at: AttributeAt, member: string, depth: number): readonly unknown[] {
  if (depth >= MAX_NESTING) {
    throw new SpanRejection(
      `${label(at)} ${member} nests arrays or key-value lists more than ${MAX_NESTING} levels deep`,
    );
  }
  if (!isJsonObject(list)) {
    throw new SpanRejection(`${label(at)} ${member} must be an object (got ${describeJson(list)})`);
  }
  const values = list.values;
  if (values === undefined || values === null) return [];
  if (Array.isArray(values)) return values;
  throw new SpanRejection(`${label(at)} ${member}.values must be an array (got ${describeJson(values)})`);
}

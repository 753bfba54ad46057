import type { AttributeValue } from '@errata/domain';
import { attributeKey } from './attribute-key-cache';
import { doubleAttribute, setAttribute, type MutableAttributes } from './attribute-object';
import { enter, leave, readInt64Attribute, skipBytes, skipField, type Reader } from './protobuf-reader';
import { attributeSizeProblem } from './validate-span';
import type { WireLayout } from './wire-layout';

/**
 * Reads one KeyValue message into `target`. With a size limit (top-level attributes only), returns
 * why the value is too large, or null; nested values count toward their top-level attribute.
 */
export function readKeyValue(
  reader: Reader,
  layout: WireLayout,
  target: MutableAttributes,
  depth: number,
  sizeLimit?: { readonly owner: string; readonly maxBytes: number },
): string | null {
  const outer = enter(reader, depth);
  let key = '';
  let value: AttributeValue = null;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.keyValue.key) {
      const start = skipBytes(reader);
      key = attributeKey(reader.buf as Buffer, start, reader.pos);
    } else if (tag === layout.keyValue.value) value = readAnyValue(reader, layout, depth + 1);
    else skipField(reader, tag, depth);
  }
  leave(reader, outer);
  setAttribute(target, key, value);
  return sizeLimit ? attributeSizeProblem(sizeLimit.owner, key, value, sizeLimit.maxBytes) : null;
}

/**
 * AnyValue is a oneof: the last member on the wire wins, and none (or only the Profiles-only
 * string_value_strindex) means an empty value, i.e. null.
 */
function readAnyValue(reader: Reader, layout: WireLayout, depth: number): AttributeValue {
  const tags = layout.anyValue;
  const outer = enter(reader, depth);
  let value: AttributeValue = null;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === tags.stringValue) value = reader.string();
    else if (tag === tags.intValue) value = readInt64Attribute(reader);
    else if (tag === tags.boolValue) value = reader.bool();
    else if (tag === tags.doubleValue) value = doubleAttribute(reader.double());
    else if (tag === tags.arrayValue) value = readArrayValue(reader, layout, depth + 1);
    else if (tag === tags.kvlistValue) value = readKeyValueList(reader, layout, depth + 1);
    else if (tag === tags.bytesValue) {
      const start = skipBytes(reader);
      value = (reader.buf as Buffer).toString('base64', start, reader.pos);
    } else {
      if (tag === tags.stringValueStrindex) value = null;
      skipField(reader, tag, depth);
    }
  }
  leave(reader, outer);
  return value;
}

function readArrayValue(reader: Reader, layout: WireLayout, depth: number): AttributeValue[] {
  const outer = enter(reader, depth);
  const values: AttributeValue[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.arrayValue.values) values.push(readAnyValue(reader, layout, depth + 1));
    else skipField(reader, tag, depth);
  }
  leave(reader, outer);
  return values;
}

function readKeyValueList(reader: Reader, layout: WireLayout, depth: number): MutableAttributes {
  const outer = enter(reader, depth);
  const values: MutableAttributes = {};
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === layout.kvlistValue.values) readKeyValue(reader, layout, values, depth + 1);
    else skipField(reader, tag, depth);
  }
  leave(reader, outer);
  return values;
}

import { decodeJsonTraceRequest } from './decode-json';
import { decodeProtobufTraceRequest } from './decode-protobuf';
import {
  DEFAULT_MAX_ATTRIBUTE_VALUE_BYTES,
  type DecodeOptions,
  type DecodedTraceRequest,
  type OtlpEncoding,
} from './types';

/**
 * Decodes an OTLP/HTTP trace export body. Invalid spans land in `rejected` (answer with a partial
 * success); a body that cannot be read at all throws OtlpDecodeError (answer 400).
 */
export function decodeTraceRequest(
  body: Uint8Array,
  encoding: OtlpEncoding,
  options: DecodeOptions = {},
): DecodedTraceRequest {
  const maxAttributeValueBytes = options.maxAttributeValueBytes ?? DEFAULT_MAX_ATTRIBUTE_VALUE_BYTES;
  return encoding === 'protobuf'
    ? decodeProtobufTraceRequest(body, maxAttributeValueBytes)
    : decodeJsonTraceRequest(body, maxAttributeValueBytes);
}

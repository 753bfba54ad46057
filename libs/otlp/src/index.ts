export type { DecodeOptions, DecodedTraceRequest, OtlpEncoding, RejectedSpan } from './types';
export { DEFAULT_MAX_ATTRIBUTE_VALUE_BYTES } from './types';
export { OtlpDecodeError } from './errors';
export { encodingForContentType } from './content-type';
export { decodeTraceRequest } from './decode-trace-request';
export { encodeStatus, encodeTraceResponse, type PartialSuccess } from './encode-response';
export { partialSuccessMessage } from './partial-success-message';
export { encodeTraceRequestProtobuf, type OtlpJsonTraceRequest } from './encode-request';

/** The content codings Errata sends, in the order it prefers them when a client accepts several equally. */
export const CONTENT_CODINGS = ['br', 'gzip'] as const;

export type ContentCoding = (typeof CONTENT_CODINGS)[number];

/** A qvalue (RFC 9110 §12.4.2): 0 to 1, up to three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The coding to send a representation in, from the request's Accept-Encoding (RFC 9110 §12.5.3) and the codings it
 * is `available` in (besides identity): the one with the highest qvalue, CONTENT_CODINGS' order breaking a tie, and
 * a coding before identity at the same qvalue. `*` stands for every coding not named, identity included; a qvalue
 * of 0 refuses. No header gets identity: what a client without one decodes is not known (RFC 9110 allows any
 * coding, few clients cope). When nothing acceptable is available, even with `identity;q=0`, identity all the same,
 * as RFC 9110 advises rather than a 406: the body can still be read by whoever sent that.
 */
export function chooseContentCoding(
  acceptEncoding: string | undefined,
  available: readonly ContentCoding[],
): ContentCoding | 'identity' {
  if (acceptEncoding === undefined) return 'identity';
  const weights = new Map<string, number>();
  for (const element of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = element.split(';').map((part) => part.trim());
    if (name === '') continue;
    let weight = 1;
    for (const parameter of parameters) {
      const [key = '', value = ''] = parameter.split('=').map((part) => part.trim());
      if (key.toLowerCase() !== 'q') continue;
      weight = QVALUE.test(value) ? Number(value) : 0; // an unreadable qvalue accepts nothing
    }
    const coding = name.toLowerCase() === 'x-gzip' ? 'gzip' : name.toLowerCase();
    // Named twice: the higher weight (a client that lists it twice meant it at least that much).
    weights.set(coding, Math.max(weight, weights.get(coding) ?? 0));
  }
  const any = weights.get('*');
  // Identity, unnamed and not refused by `*;q=0`, is acceptable, after every coding the client named: one that
  // lists `br;q=0.9, gzip;q=0.8` wants br.
  const weightOf = (coding: string): number =>
    weights.get(coding) ?? any ?? (coding === 'identity' ? Number.MIN_VALUE : 0);
  let best: ContentCoding | 'identity' = 'identity';
  let bestWeight = weightOf('identity');
  for (const coding of CONTENT_CODINGS) {
    if (!available.includes(coding)) continue;
    const weight = weightOf(coding);
    if (weight > 0 && (weight > bestWeight || (weight === bestWeight && best === 'identity'))) {
      best = coding;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * The entity tag of a representation sent in `coding`, from the identity's: each coding's bytes differ, and a cache
 * or a Range request's If-Range must not take one for another (RFC 9110 §8.8.3). `W/"…"` stays weak.
 */
export function codedEntityTag(etag: string, coding: ContentCoding): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}-${coding}"` : etag;
}

import {
  createParamDecorator,
  ForbiddenException,
  Injectable,
  SetMetadata,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { KeyScope } from '../database/schema';
import { aKeyOf, ApiKeyService, scopeAllows, type Principal } from '../services/api-key.service';

const REQUIRED_SCOPE = 'errata:required-scope';

/** The scope a route needs; the guard refuses keys of other scopes (admin keys pass everywhere). */
export const RequireScope = (scope: KeyScope) => SetMetadata(REQUIRED_SCOPE, scope);

type AuthenticatedRequest = Request & { principal?: Principal };

/** The principal the guard authenticated, as a handler parameter. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new UnauthorizedException('missing API key');
  return principal;
});

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeyService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const needed = this.reflector.getAllAndOverride<KeyScope | undefined>(REQUIRED_SCOPE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!needed) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const checked = await checkKey(this.keys, request.headers.authorization, needed);
    if ('refusal' in checked) {
      if (checked.challenge !== undefined)
        context.switchToHttp().getResponse<Response>().setHeader('WWW-Authenticate', checked.challenge);
      throw checked.refusal;
    }
    request.principal = checked.principal;
    return true;
  }
}

/** A key's principal, or the refusal (and, for a 401, its `WWW-Authenticate` challenge) a request with it gets. */
export type KeyCheck =
  | { readonly principal: Principal }
  | { readonly refusal: UnauthorizedException | ForbiddenException; readonly challenge?: string };

/**
 * What the guard decides for an `Authorization` header on a route that needs `needed`; also asked before an upload's
 * `100 Continue` (start-server.ts), so that a body is never invited only to be refused for its key.
 */
export async function checkKey(
  keys: ApiKeyService,
  authorization: string | undefined,
  needed: KeyScope,
): Promise<KeyCheck> {
  // RFC 6750: a 401 names the scheme it wants, and says when the token given was not accepted.
  const challenge = (error?: string) => `Bearer realm="errata"${error ? `, error="${error}"` : ''}`;
  const key = bearerToken(authorization);
  if (!key) {
    return {
      refusal: new UnauthorizedException('missing API key: send "Authorization: Bearer <key>"'),
      challenge: challenge(),
    };
  }
  const principal = await keys.verify(key);
  if (!principal) {
    return {
      refusal: new UnauthorizedException('invalid or revoked API key'),
      challenge: challenge('invalid_token'),
    };
  }
  if (!scopeAllows(principal.scope, needed)) {
    return {
      refusal: new ForbiddenException(
        `this is ${aKeyOf(principal.scope)}; this endpoint needs ${aKeyOf(needed)}`,
      ),
    };
  }
  return { principal };
}

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

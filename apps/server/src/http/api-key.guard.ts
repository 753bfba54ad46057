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
    // RFC 6750: a 401 names the scheme it wants, and says when the token given was not accepted.
    const challenge = (error?: string) =>
      context
        .switchToHttp()
        .getResponse<Response>()
        .setHeader('WWW-Authenticate', `Bearer realm="errata"${error ? `, error="${error}"` : ''}`);
    const key = bearerToken(request.headers.authorization);
    if (!key) {
      challenge();
      throw new UnauthorizedException('missing API key: send "Authorization: Bearer <key>"');
    }
    const principal = await this.keys.verify(key);
    if (!principal) {
      challenge('invalid_token');
      throw new UnauthorizedException('invalid or revoked API key');
    }
    if (!scopeAllows(principal.scope, needed)) {
      throw new ForbiddenException(
        `this is ${aKeyOf(principal.scope)}; this endpoint needs ${aKeyOf(needed)}`,
      );
    }
    request.principal = principal;
    return true;
  }
}

function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1] ?? null;
}

import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { compareVersions } from '@errata/domain';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { OwnerRepository, type Owner } from '../repositories/owner.repository';
import { refusalOf } from '../webhooks/safe-http';
import { newSecret } from '../webhooks/standard-webhooks';

export interface OwnerRegistration {
  readonly serverName: string;
  readonly versionRange: string | null;
  readonly webhookUrl: string;
  readonly contact: string | null;
}

const COMPARATOR = /^(>=|<=|>|<|=)?(\d[\w.+-]*)$/;

/** Owners as the API shows them: secrets never, only how many sign. */
export const shownOwner = ({ secrets, ...owner }: Owner) => ({ ...owner, signingSecrets: secrets.length });

/** Does `version` satisfy a range such as ">=1.2.0 <2" (null: every version)? */
export function inVersionRange(version: string | null, range: string | null): boolean {
  if (range === null) return true;
  if (version === null) return false;
  return range
    .trim()
    .split(/\s+/)
    .every((comparator) => {
      const [, op = '=', bound = ''] = COMPARATOR.exec(comparator) ?? [];
      const order = compareVersions(version, bound);
      return op === '>='
        ? order >= 0
        : op === '<='
          ? order <= 0
          : op === '>'
            ? order > 0
            : op === '<'
              ? order < 0
              : order === 0;
    });
}

@Injectable()
export class OwnerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'webhookAllowInternal'>,
    private readonly owners: OwnerRepository,
  ) {}

  /** Registers an owner; the signing secret is in this answer only. */
  async register(projectId: number, registration: OwnerRegistration) {
    // A URL every delivery would be refused for fails now, not after the last attempt of the first suggestion.
    const refusal = refusalOf(registration.webhookUrl, this.config.webhookAllowInternal);
    if (refusal !== null) {
      const allow = this.config.webhookAllowInternal
        ? ''
        : ' (ERRATA_WEBHOOK_ALLOW_INTERNAL=true lets webhooks reach them)';
      throw new BadRequestException(`"webhookUrl" is refused: ${refusal}${allow}`);
    }
    const range = registration.versionRange;
    if (
      range !== null &&
      !range
        .trim()
        .split(/\s+/)
        .every((part) => COMPARATOR.test(part))
    ) {
      throw new BadRequestException(
        `"versionRange" must be comparators such as ">=1.2.0 <2"; got "${range}"`,
      );
    }
    const secret = newSecret();
    try {
      const owner = await this.owners.create({ projectId, ...registration, secret });
      return { ...shownOwner(owner), secret };
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw new BadRequestException(
          `server "${registration.serverName}" already has an owner for that version range`,
        );
      }
      throw error;
    }
  }

  async list(projectId: number) {
    return (await this.owners.list(projectId)).map(shownOwner);
  }

  async remove(projectId: number, id: string): Promise<void> {
    if (!(await this.owners.remove(projectId, id))) throw new NotFoundException(`no owner ${id}`);
  }

  /** A new secret signs from now on; the previous one keeps signing too until the next rotation. */
  async rotateSecret(projectId: number, id: string) {
    const secret = newSecret();
    const owner = await this.owners.rotateSecret(projectId, id, secret);
    if (owner === undefined) throw new NotFoundException(`no owner ${id}`);
    return { ...shownOwner(owner), secret };
  }

  /**
   * Re-enables an endpoint disabled by a 410: the news decided meanwhile, pending, goes out; its disabled deliveries
   * can then be redelivered.
   */
  async enable(projectId: number, id: string) {
    const owner = await this.owners.find(projectId, id);
    if (owner === undefined) throw new NotFoundException(`no owner ${id}`);
    await this.owners.enable(id);
    return shownOwner({ ...owner, disabledAt: null, disabledReason: null });
  }
}

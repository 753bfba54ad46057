import { BadRequestException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { parseVersionRange, sameVersionRange, storedName, VERSION_RANGE_FORMS } from '@errata/domain';
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

/** Owners as the API shows them: secrets never, only how many sign. */
export const shownOwner = ({ secrets, ...owner }: Owner) => ({ ...owner, signingSecrets: secrets.length });

@Injectable()
export class OwnerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'webhookAllowInternal'>,
    private readonly owners: OwnerRepository,
  ) {}

  /** Registers an owner; the signing secret is in this answer only. */
  async register(projectId: number, given: OwnerRegistration) {
    // The name as findings key it: a longer one, stored whole, would never match its server's findings.
    const registration = { ...given, serverName: storedName(given.serverName) };
    // A URL every delivery would be refused for fails now, not after the last attempt of the first suggestion.
    const refusal = refusalOf(registration.webhookUrl, this.config.webhookAllowInternal);
    if (refusal !== null) {
      const allow = this.config.webhookAllowInternal
        ? ''
        : ' (ERRATA_WEBHOOK_ALLOW_INTERNAL=true lets webhooks reach them)';
      throw new BadRequestException(`"webhookUrl" is refused: ${refusal}${allow}`);
    }
    const versionRange = this.canonicalRange(registration.versionRange);
    // One owner per range: equivalent ranges are one range, or one endpoint gets each piece of news once per
    // spelling, with webhook-ids that cannot tell the copies apart. New ranges are stored canonical, so the unique
    // constraint catches two registrations at once; owners registered before that may be spelt otherwise.
    const alike = (await this.owners.rangesOf(projectId, registration.serverName)).find((owner) =>
      sameVersionRange(owner.versionRange, versionRange),
    );
    if (alike !== undefined) throw this.duplicate(registration.serverName, alike.versionRange, alike.id);
    const secret = newSecret();
    try {
      const owner = await this.owners.create({ projectId, ...registration, versionRange, secret });
      return { ...shownOwner(owner), secret };
    } catch (error) {
      if ((error as { code?: string }).code === '23505') {
        throw this.duplicate(registration.serverName, versionRange, null);
      }
      throw error;
    }
  }

  /** The range as stored: canonical (`>=2.0 <3` is `>=2.0.0 <3.0.0`), or a 400 saying what forms it may take. */
  private canonicalRange(range: string | null): string | null {
    if (range === null) return null;
    // Given empty, it is a mistake (a blank form field, an unset variable), not a wish for every version: that is
    // leaving it out, which an owner of a narrower range would not want said for it.
    if (range.trim() === '') {
      throw new BadRequestException('"versionRange" is empty: leave it out for every version');
    }
    const parsed = parseVersionRange(range);
    if (parsed.refusal !== undefined) {
      throw new BadRequestException(`${VERSION_RANGE_FORMS}; got "${range}": ${parsed.refusal}`);
    }
    return parsed.canonical;
  }

  private duplicate(serverName: string, range: string | null, ownerId: string | null) {
    const which = range === null ? 'every version' : `version range "${range}"`;
    const owner = ownerId === null ? 'an owner' : `an owner (${ownerId})`;
    return new BadRequestException(`server "${serverName}" already has ${owner} for ${which}`);
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

// `fleet token`: a super-user JWT minted from the cloud's secret (JWT_SECRET or its file), for the
// embedded default; and the token every other command mints for its operator when none is given.
// The signing code loads only when a token is minted.
import type { Command } from 'commander';
import { operatorOption } from '../cli/operator.ts';
import { positiveWholeNumber } from '../cli/number-options.ts';
import type { CommandContext } from './context.ts';

/** A super-user token minted from the JWT secret (JWT_SECRET or its file). */
export async function mintSuperUserToken(claims: { subject: string; ttlSeconds: number; groups?: string[]; groupsClaim?: string }): Promise<string> {
  const [{ resolveJwtSecret }, { mintToken }] = await Promise.all([import('../../cloud/auth/jwt-secret.ts'), import('../../cloud/auth/jwt.ts')]);
  const { secret } = resolveJwtSecret(process.env, { create: false });
  return mintToken(secret, claims);
}

export function tokenCommand(program: Command, { operator }: CommandContext): void {
  program
    .command('token')
    .description('Mint a super-user JWT (HS256) from JWT_SECRET or the JWT secret file, for the embedded default')
    .option('--subject <sub>', 'the sub claim: who the audit log names (default: --as, else user@host)', operatorOption)
    .option('--ttl <seconds>', 'lifetime in seconds', positiveWholeNumber, 3600)
    .option('--group <name...>', 'groups claim values', ['superuser'])
    .action(async (o: { subject?: string; ttl: number; group: string[] }) => {
      process.stdout.write((await mintSuperUserToken({ subject: o.subject ?? operator(), ttlSeconds: o.ttl, groups: o.group, groupsClaim: process.env.JWT_GROUPS_CLAIM || 'groups' })) + '\n');
    });
}

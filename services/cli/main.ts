// The admin command line, in the style of tootctl: `npm run cli -- <command> ...`
//   accounts create NAME --email E [--confirmed] [--approve] [--role R]   (prints the new password)
//   accounts modify NAME [--confirm] [--approve] [--role R | --remove-role] [--disable | --enable] [--disable-2fa]
//   settings registrations [open | approved | closed]                      (no mode: prints the current one)
//   instance ..., rules ..., emoji ..., announcements ...                  (see siteCommands.ts)
//   trends ... / search rebuild                                            (see trendsCommands.ts)
//   settings feeds [NAME public|authenticated|disabled]                    (feed access; no NAME: prints all four)
//   delivery domains | delivery reset HOST          (failing/unavailable destinations; close a breaker)
//   notifications rebuild-groups                    (recompute the grouped-notification summaries)
// Bad input: a one-line error on stderr and exit code 1.
import { ConfigError, loadConfig, loadEnvironment, type Config } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { createCore, type Core } from '../core/context.ts';
import type { EventSink } from '../core/events/outbox.ts';
import { createKafkaEventSink } from '../core/events/kafkaSink.ts';
import {
  accountsCreate,
  accountsModify,
  settingsRegistrations,
  settingsFeeds,
  checkCreateInput,
  checkRegistrationsMode,
  CliError,
  commandArgs,
  type Out,
} from './commands.ts';
import { MODERATION_USAGE, parseModerationCommand } from './moderation.ts';
import { parseSiteCommand, SITE_USAGE } from './siteCommands.ts';
import { parseTrendsCommand, TRENDS_USAGE } from './trendsCommands.ts';
import { MEDIA_USAGE, parseMediaCommand } from './mediaCommands.ts';
import { deliveryDomains, deliveryReset } from './delivery.ts';
import { rebuildAllGroups } from '../core/notifications/groups.ts';

const USAGE = `Usage:
  cli accounts create NAME --email EMAIL [--confirmed] [--approve] [--role ROLE]
  cli accounts modify NAME [--confirm] [--approve] [--role ROLE | --remove-role] [--disable | --enable] [--disable-2fa]
  cli settings registrations [open | approved | closed]
  cli settings feeds [local_live_feed_access|remote_live_feed_access|local_topic_feed_access|remote_topic_feed_access public|authenticated|disabled]
  cli delivery domains
  cli delivery reset HOST
  cli notifications rebuild-groups
${MODERATION_USAGE}
${SITE_USAGE}
${TRENDS_USAGE}
${MEDIA_USAGE}`;

type Command = (core: Core, out: Out) => Promise<void>;

function parse(argv: string[]): Command {
  const moderation = parseModerationCommand(argv);
  if (moderation) return moderation;
  const [group, action, ...rest] = argv;
  if (group === 'accounts' && action === 'create') {
    const { values, positionals } = commandArgs(rest, {
      email: { type: 'string' },
      confirmed: { type: 'boolean' },
      approve: { type: 'boolean' },
      role: { type: 'string' },
    });
    if (positionals.length !== 1) throw new CliError('accounts create needs exactly one NAME');
    checkCreateInput(positionals[0], values);
    return (core, out) => accountsCreate(core, positionals[0], values, out);
  }
  if (group === 'accounts' && action === 'modify') {
    const { values, positionals } = commandArgs(rest, {
      confirm: { type: 'boolean' },
      approve: { type: 'boolean' },
      role: { type: 'string' },
      'remove-role': { type: 'boolean' },
      disable: { type: 'boolean' },
      enable: { type: 'boolean' },
      'disable-2fa': { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new CliError('accounts modify needs exactly one NAME');
    return (core, out) =>
      accountsModify(
        core,
        positionals[0],
        { ...values, removeRole: values['remove-role'], disable2fa: values['disable-2fa'] },
        out,
      );
  }
  if (group === 'settings' && action === 'registrations') {
    const { positionals } = commandArgs(rest, {});
    if (positionals.length > 1) throw new CliError('settings registrations takes one mode');
    checkRegistrationsMode(positionals[0]);
    return (core, out) => settingsRegistrations(core, positionals[0], out);
  }
  const trends = parseTrendsCommand(group, action, rest);
  if (trends) return trends;
  const media = parseMediaCommand(group, action, rest);
  if (media) return media;
  if (group === 'settings' && action === 'feeds') {
    const { positionals } = commandArgs(rest, {});
    if (positionals.length === 1 || positionals.length > 2) throw new CliError('settings feeds takes NAME and VALUE');
    return (core, out) => settingsFeeds(core, positionals[0], positionals[1], out);
  }
  if (group === 'delivery' && action === 'domains' && rest.length === 0)
    return (core, out) => deliveryDomains(core, out);
  if (group === 'delivery' && action === 'reset') {
    if (rest.length !== 1) throw new CliError('delivery reset needs exactly one HOST');
    return (core, out) => deliveryReset(core, rest[0], out);
  }
  if (group === 'notifications' && action === 'rebuild-groups' && rest.length === 0)
    return async (core, out) => {
      const n = await rebuildAllGroups(core, (done) => out(`${done} groups rebuilt`));
      out(`OK: ${n} groups rebuilt`);
    };
  const site = parseSiteCommand(argv);
  if (site) return site;
  throw new CliError(`Unknown command: ${argv.join(' ') || '(none)'}`);
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    if (argv.length === 0) process.exit(1);
    return;
  }
  // Input is checked before any connection is made: mistakes fail fast.
  let command: Command;
  try {
    command = parse(argv);
  } catch (err) {
    // parseArgs throws TypeErrors with a code for unknown or malformed options.
    if (err instanceof CliError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      fail(`${(err as Error).message}\n${USAGE}`);
    throw err;
  }
  let config: Config;
  try {
    config = loadConfig(loadEnvironment());
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', 'cli');
  // Events (e.g. a confirmation mail) go through the outbox: if Kafka is unreachable now, they stay
  // pending and the outbox relay of a running server publishes them.
  const kafka = await createKafkaEventSink(config, logger).catch((err: unknown) => {
    logger.warn({ err }, 'Kafka unreachable: events stay in the outbox for the relay');
    return null;
  });
  const sink: EventSink & { close?: () => Promise<void> } = {
    async publish(events) {
      if (!kafka) throw new Error('Kafka unreachable');
      await kafka.publish(events);
    },
    close: async () => kafka?.close(),
  };
  const core = await createCore(config, { sink, logger });
  try {
    await command(core, (line) => process.stdout.write(`${line}\n`));
  } catch (err) {
    if (err instanceof CliError) {
      await core.close();
      fail(err.message);
    }
    throw err;
  }
  await core.close();
}

await main();

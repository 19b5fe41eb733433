'use strict';
/**
 * Command table for the team chat bot.
 *
 * A message that starts with the prefix ("!deploy staging") is routed to the handler
 * registered under the command's name or one of its aliases. A handler gets a context
 * ({ user, channel, args, reply }) and may return the text to answer with; handlers
 * that call other services (deploys, the on-call rota, the CI) are async functions.
 */

const DEFAULT_PREFIX = '!';
const COOLDOWN_MS = 3000;

class CommandTable {
  constructor({ prefix = DEFAULT_PREFIX, log = console, now = Date.now } = {}) {
    this.prefix = prefix;
    this.log = log;
    this.now = now;
    this.commands = new Map();
    this.lastUse = new Map();
  }

  register(name, handler, { help = '', admin = false, aliases = [] } = {}) {
    if (typeof handler !== 'function') {
      throw new TypeError(`handler for ${name} must be a function`);
    }
    const entry = { name: name.toLowerCase(), handler, help, admin };
    for (const key of [name, ...aliases]) {
      const k = key.toLowerCase();
      if (this.commands.has(k)) throw new Error(`command ${k} is already registered`);
      this.commands.set(k, entry);
    }
    return this;
  }

  parse(text) {
    if (!text.startsWith(this.prefix)) return null;
    const [name, ...args] = text.slice(this.prefix.length).trim().split(/\s+/);
    if (!name) return null;
    return { name: name.toLowerCase(), args };
  }

  helpText() {
    const seen = new Set();
    const lines = [];
    for (const entry of this.commands.values()) {
      if (seen.has(entry)) continue;
      seen.add(entry);
      lines.push(`${this.prefix}${entry.name}${entry.help ? ` - ${entry.help}` : ''}`);
    }
    return lines.sort().join('\n');
  }

  // Whether the user ran the same command less than COOLDOWN_MS ago (and if not,
  // remember that they run it now).
  coolingDown(user, entry) {
    const key = `${user.id}:${entry.name}`;
    const last = this.lastUse.get(key);
    const now = this.now();
    if (last !== undefined && now - last < COOLDOWN_MS) return true;
    this.lastUse.set(key, now);
    return false;
  }

  /** Handle one chat message; resolves to whether it was a command. */
  async dispatch(message, reply) {
    const parsed = this.parse(message.text || '');
    if (!parsed) return false;
    const entry = this.commands.get(parsed.name);
    if (!entry) {
      await reply(`Unknown command ${this.prefix}${parsed.name}. Try ${this.prefix}help.`);
      return true;
    }
    if (entry.admin && !message.user.admin) {
      await reply(`${this.prefix}${entry.name} is for admins only.`);
      return true;
    }
    if (this.coolingDown(message.user, entry)) return true;

    const ctx = { user: message.user, channel: message.channel, args: parsed.args, reply };
    try {
      const answer = await entry.handler(ctx);
      if (typeof answer === 'string' && answer) await reply(answer);
    } catch (err) {
      this.log.error(`command ${entry.name} failed:`, err);
      await reply(`Sorry, ${this.prefix}${entry.name} failed: ${err.message}`);
    }
    return true;
  }
}

function builtins(table) {
  table.register('help', () => table.helpText(), { help: 'list the commands', aliases: ['commands'] });
  table.register('ping', () => 'pong', { help: 'check that the bot is alive' });
  table.register('echo', (ctx) => ctx.args.join(' '), { help: 'repeat the text' });
  table.register('roll', (ctx) => {
    const sides = Number(ctx.args[0] || 6);
    if (!Number.isInteger(sides) || sides < 2) throw new Error('roll needs a number of sides >= 2');
    return String(1 + Math.floor(Math.random() * sides));
  }, { help: 'roll a die: !roll [sides]' });
  return table;
}

module.exports = { CommandTable, builtins, DEFAULT_PREFIX, COOLDOWN_MS };

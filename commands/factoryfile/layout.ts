/**
 * Where each file of a definition belongs (reference notes §6.1): the resource a path declares,
 * named by its directory or file name. A path shaped like a resource at another place is refused
 * (FF_UNSUPPORTED_PATH); other files under the resource folders, and everything outside them
 * (a README, CI settings), are ignored. Supporting files of a skill's folder are kept as its assets.
 */
export type FileRole =
  | { kind: 'factory' }
  | { kind: 'agent'; name: string }
  | { kind: 'agentSkill'; agent: string; name: string }
  | { kind: 'automation'; name: string; flat: boolean }
  | { kind: 'runner'; name: string }
  | { kind: 'scorer'; name: string }
  | { kind: 'skill'; name: string }
  | { kind: 'webhook'; name: string }
  | { kind: 'benchmarkSuite'; suite: string }
  | { kind: 'benchmarkTask'; suite: string; name: string }
  | { kind: 'asset' }
  | { kind: 'ignored' }
  | { kind: 'unsupported'; message: string };

/** A resource name: the directory or file name that identifies it. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const RESOURCE_FILE = /^(agent|automation|scorer|suite|runner|webhook)\.(md|ya?ml)$|^skill\.md$|^factory\.ya?ml$/i;

const unsupported = (message: string): FileRole => ({ kind: 'unsupported', message });

/** A path of a file of the definition: relative, `/`-separated, no empty, `.` or `..` segment. */
export const PATH_PATTERN = /^(?!\/)(?!.*\/\/)(?!(.*\/)?\.{1,2}(\/|$))[^\\\0]{1,512}$/;

export function roleOf(path: string): FileRole {
  const parts = path.split('/');
  const [top, a, b, c, d] = parts;
  const n = parts.length;
  if (n === 1) {
    if (top === 'factory.yaml') return { kind: 'factory' };
    return RESOURCE_FILE.test(top!)
      ? unsupported('the factory is described by factory.yaml, at the root')
      : { kind: 'ignored' };
  }
  const named = (name: string, role: FileRole): FileRole =>
    NAME.test(name)
      ? role
      : unsupported(`${name} is not a resource name: letters, digits, ., _ and -, from a letter or digit`);
  // A README (or any file not named like a resource file) beside the resources is documentation.
  const resembles = (file: string) => /\.(md|ya?ml)$/i.test(file) && !/^readme/i.test(file);
  switch (top) {
    case 'agents':
      if (n === 3 && b === 'agent.md') return named(a!, { kind: 'agent', name: a! });
      if (n === 5 && b === 'skills' && d === 'SKILL.md')
        return named(a!, named(c!, { kind: 'agentSkill', agent: a!, name: c! }));
      if (n > 5 && b === 'skills') return { kind: 'asset' };
      if (n === 2 && resembles(a!)) return unsupported('an agent is agents/<name>/agent.md');
      if (n === 3 && /^agent\./i.test(b!)) return unsupported('an agent is agents/<name>/agent.md');
      if (n > 3 && /^agent\.md$/i.test(parts[n - 1]!)) return unsupported('an agent is agents/<name>/agent.md');
      return { kind: 'ignored' };
    case 'automations':
      if (n === 3 && b === 'automation.md') return named(a!, { kind: 'automation', name: a!, flat: false });
      if (n === 2 && a!.endsWith('.md') && !/^readme/i.test(a!)) {
        const name = a!.slice(0, -3);
        return named(name, { kind: 'automation', name, flat: true });
      }
      if (n === 2 && resembles(a!)) return unsupported('an automation is automations/<name>/automation.md');
      if (/^automation\./i.test(parts[n - 1]!)) return unsupported('an automation is automations/<name>/automation.md');
      return { kind: 'ignored' };
    case 'runners':
      if (n === 2 && a!.endsWith('.yaml')) return named(a!.slice(0, -5), { kind: 'runner', name: a!.slice(0, -5) });
      if ((n === 2 && /\.ya?ml$/i.test(a!)) || /^runner\./i.test(parts[n - 1]!))
        return unsupported('a runner is runners/<name>.yaml');
      return { kind: 'ignored' };
    case 'webhooks':
      if (n === 2 && a!.endsWith('.yaml')) return named(a!.slice(0, -5), { kind: 'webhook', name: a!.slice(0, -5) });
      if ((n === 2 && /\.ya?ml$/i.test(a!)) || /^webhook\./i.test(parts[n - 1]!))
        return unsupported('a webhook is webhooks/<name>.yaml');
      return { kind: 'ignored' };
    case 'scorers':
      if (n === 3 && b === 'scorer.md') return named(a!, { kind: 'scorer', name: a! });
      if ((n === 2 && resembles(a!)) || /^scorer\./i.test(parts[n - 1]!))
        return unsupported('a scorer is scorers/<name>/scorer.md');
      return { kind: 'ignored' };
    case 'skills':
      if (n === 3 && b === 'SKILL.md') return named(a!, { kind: 'skill', name: a! });
      if (n >= 3) return { kind: 'asset' };
      if (resembles(a!)) return unsupported('a skill is skills/<name>/SKILL.md');
      return { kind: 'ignored' };
    case 'benchmarks':
      if (n === 3 && b === 'suite.yaml') return named(a!, { kind: 'benchmarkSuite', suite: a! });
      if (n === 4 && b === 'tasks' && c!.endsWith('.yaml'))
        return named(a!, named(c!.slice(0, -5), { kind: 'benchmarkTask', suite: a!, name: c!.slice(0, -5) }));
      if (/^suite\./i.test(parts[n - 1]!) || (b === 'tasks' && /\.ya?ml$/i.test(parts[n - 1]!)))
        return unsupported('a benchmark is benchmarks/<suite>/suite.yaml with benchmarks/<suite>/tasks/<task>.yaml');
      return { kind: 'ignored' };
    default:
      return { kind: 'ignored' };
  }
}

/** The folders a definition's files live in: what `shopfloor factory push` uploads. */
export const DEFINITION_FOLDERS = ['agents', 'automations', 'runners', 'webhooks', 'scorers', 'skills', 'benchmarks'];

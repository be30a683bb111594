import { ARG_SPACE, type Instruction, onbuildTrigger, parseContainerfile } from './containerfile-grammar.js';

/**
 * What in the agent's Containerfile may reach the engine: an allow-list, not a list of bad
 * spellings. The engine's daemon downloads an `ADD <url>` itself and pulls an image it lacks
 * itself, from the host's own network (its loopback services and a cloud's metadata address
 * included), outside the container.network policy the RUN steps get; and it undoes quoting,
 * escapes, continuations and variables (ARG, ENV, a base image's ENV) before it looks at a
 * source. So the Containerfile is read with the engine's own grammar (containerfile-grammar.ts)
 * and, where a fetch could start, only text that no such undoing can change is allowed:
 * - an ADD or COPY source is a plain relative path of safe characters (no quote, escape
 *   character, `$`, `:` or `<`): the engine's word expansion leaves it as it is, and no URL
 *   has no colon;
 * - FROM and `COPY --from=` name `scratch`, an earlier stage, or an image written as it is, which
 *   the caller then allows only from the operator's list (instance-image.ts);
 * - no flag but ADD's and COPY's `--chown`/`--chmod` and COPY's `--from`; no `# syntax=` frontend;
 * - no line that Podman's builder would read otherwise (containerfile-grammar.ts's PODMAN rules);
 * - an ONBUILD's trigger, which runs in whatever build starts from that stage, passes the same
 *   rules read on its own, as the engine reads it then (and so do base images' triggers).
 */

/** A plain path in the build context (globs allowed): nothing in it is a quote, an escape, a variable, a colon or a heredoc. */
const PLAIN_SOURCE = /^[A-Za-z0-9._/@%+=,~*?-]+$/;
/** An image reference or stage, written as it is. */
const PLAIN_IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/;
/** A stage name both engines read alike (Docker's rule, lower case as written: Podman compares names case-sensitively and allows any). */
const STAGE_NAME = /^[a-z][a-z0-9_.-]*$/;
/** What a `--chown`/`--chmod` value may hold. */
const PLAIN_FLAG_VALUE = /^[A-Za-z0-9._:-]*$/;

export interface Refusal {
  /** The instruction as written (its first 200 characters), for the message. */
  text: string;
  line: number;
  why: string;
}

/** An image the Containerfile names outside its own stages: the caller allows it or not, and looks at its ONBUILD triggers. */
export interface NamedImage {
  /** How it is named: `FROM` or `COPY --from`. */
  instruction: string;
  reference: string;
}

export interface ContainerfileUses {
  refused: Refusal[];
  images: NamedImage[];
}

const SOURCE_RULE = 'a source must be a plain path in the build context (letters, digits and . _ / - @ % + = , ~ * ?): no quotes, escapes, variables, colons, URLs or heredocs';

/** Pure: the arguments of ADD or COPY as the engine splits them (JSON form, or words); undefined for a JSON form it would not read as ours. */
function listArguments(args: string): string[] | undefined {
  if (!args.startsWith('[')) return args === '' ? [] : args.split(ARG_SPACE);
  try {
    const parsed = JSON.parse(args) as unknown;
    if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) return parsed as string[];
  } catch {
    // The engine reads a JSON array and ignores what follows it; this reads only a whole one.
  }
  return undefined;
}

/**
 * Pure: what the Containerfile would have the engine fetch or use, read with the engine's grammar.
 * `stages`: the stage names and count before this text (for a trigger: those of the build it runs in).
 */
export function containerfileUses(text: string, stages: { names: string[]; count: number } = { names: [], count: 0 }): ContainerfileUses {
  const parsed = parseContainerfile(text);
  const uses: ContainerfileUses = { refused: [], images: [] };
  if (parsed.error !== undefined) uses.refused.push({ text: '# escape', line: 1, why: parsed.error });
  uses.refused.push(...parsed.ambiguous);
  const syntax = parsed.directives.get('syntax');
  if (syntax !== undefined) uses.refused.push({ text: `# syntax=${syntax}`, line: 1, why: 'a build frontend image, which the engine would pull' });
  const names = [...stages.names];
  let count = stages.count;
  // As written, and an index only for COPY --from: Podman matches stage names case-sensitively (Docker
  // lower-cases them), so `AS X` then `FROM x` would be a stage to Docker and an image Podman pulls.
  const isStage = (name: string, kind: string) => names.includes(name) || (kind === 'COPY --from' && /^(0|[1-9]\d*)$/.test(name) && Number(name) < count);
  for (const instruction of parsed.instructions) {
    const refuse = (why: string) => uses.refused.push({ text: instruction.original.trim().slice(0, 200), line: instruction.line, why });
    const image = (kind: string, reference: string) => {
      if (!PLAIN_IMAGE.test(reference)) refuse(`${kind} ${reference}: name the image as it is (docker images lists them), without quotes, escapes or variables`);
      else if (reference.toLowerCase() !== 'scratch' && !isStage(reference, kind)) uses.images.push({ instruction: kind, reference });
    };
    switch (instruction.keyword) {
      case 'from': {
        if (instruction.flags.length > 0) refuse(`${instruction.flags.join(' ')}: FROM takes no flag here (--platform would make the engine pull another platform's variant)`);
        const words = instruction.args === '' ? [] : instruction.args.split(ARG_SPACE);
        image('FROM', words[0] ?? '');
        count += 1;
        if (words[1]?.toLowerCase() === 'as' && words[2] !== undefined) {
          if (STAGE_NAME.test(words[2])) names.push(words[2]);
          else refuse(`AS ${words[2]}: a stage name is lower-case letters, digits, - _ and . starting with a letter (both engines then read it alike)`);
        }
        break;
      }
      case 'add':
      case 'copy':
        checkCopy(instruction, refuse, image);
        break;
      case 'run':
        if (instruction.flags.length > 0) refuse(`${instruction.flags.join(' ')}: RUN takes no flag here (a --mount could name an image the engine would pull)`);
        break;
      case 'onbuild': {
        if (instruction.flags.length > 0) refuse(`${instruction.flags.join(' ')}: ONBUILD takes no flag`);
        // The trigger runs later, in a build that starts FROM this stage, read again on its own: the same rules then.
        const trigger = containerfileUses(onbuildTrigger(instruction.original), { names, count });
        for (const refusal of trigger.refused) uses.refused.push({ ...refusal, text: instruction.original.trim().slice(0, 200), line: instruction.line, why: `as an ONBUILD trigger: ${refusal.why}` });
        uses.images.push(...trigger.images.map((named) => ({ ...named, instruction: `ONBUILD ${named.instruction}` })));
        break;
      }
      default:
        break;
    }
  }
  return uses;
}

function checkCopy(instruction: Instruction, refuse: (why: string) => void, image: (kind: string, reference: string) => void): void {
  const keyword = (instruction.keyword ?? '').toUpperCase();
  for (const flag of instruction.flags) {
    const [, name, value] = /^--([a-z]+)=(.*)$/s.exec(flag) ?? [];
    if ((name === 'chown' || name === 'chmod') && PLAIN_FLAG_VALUE.test(value ?? '')) continue;
    if (name === 'from' && keyword === 'COPY') image('COPY --from', value ?? '');
    else refuse(`${keyword} ${JSON.stringify(flag)}: only --chown=, --chmod= with a plain value${keyword === 'COPY' ? ' and --from=' : ''} are allowed`);
  }
  const words = listArguments(instruction.args);
  if (words === undefined) {
    refuse(`${keyword} ${instruction.args.slice(0, 80)}: write the JSON form as one JSON array of strings, and nothing after it`);
    return;
  }
  for (const source of words.slice(0, -1)) {
    if (!PLAIN_SOURCE.test(source)) refuse(`${keyword} ${JSON.stringify(source)}: ${SOURCE_RULE}`);
  }
}

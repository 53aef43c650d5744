// The --controllers flag, with upstream semantics: `*` turns on the controllers
// that are on by default, `name` turns one on, `-name` turns one off; the first
// entry naming a controller decides. Controllers answer to their full name
// (`token-cleaner-controller`) and their short alias (`tokencleaner`).

export interface ControllerName {
  name: string;
  alias: string;
  /** Off unless named (the bootstrap signer and the token cleaner). */
  disabledByDefault?: boolean;
}

export class ControllerSelectionError extends Error {}

const matches = (entry: string, c: ControllerName) => entry === c.name || entry === c.alias;

/** Whether one controller runs under the given entries. */
export function isEnabled(c: ControllerName, entries: string[]): boolean {
  let star = false;
  for (const entry of entries) {
    if (matches(entry, c)) return true;
    if (entry.startsWith('-') && matches(entry.slice(1), c)) return false;
    if (entry === '*') star = true;
  }
  return star && !c.disabledByDefault;
}

/** The controllers that run; an entry naming no known controller is an error. */
export function selectControllers<T extends ControllerName>(known: T[], entries: string[]): T[] {
  for (const entry of entries) {
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (entry !== '*' && !known.some((c) => matches(name, c))) {
      throw new ControllerSelectionError(`"${entry}" is not in the list of known controllers: ${known.map((c) => c.alias).join(', ')}`);
    }
  }
  return known.filter((c) => isEnabled(c, entries));
}

/** A controller the controller-manager runs. */
export interface Controller {
  start(): Promise<void>;
  stop(): void;
}

export interface CatalogEntry extends ControllerName {
  create(): Controller;
}

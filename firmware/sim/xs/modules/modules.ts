// `modules` (documentation/xs/mods.md "Modules"): importNow(specifier) loads a module the build
// included but did not preload. The emulation's app bundle carries only what the platform imports;
// a module it does not carry throws as a missing one does on the board.
const registered = new Map<string, unknown>();

/** Makes a module available to importNow (the sim's entry registers what the app may load). */
export function registerModule(specifier: string, namespace: unknown): void {
  registered.set(specifier, namespace);
}

const Modules = {
  importNow(specifier: string): unknown {
    if (!registered.has(specifier)) throw new Error(`module "${specifier}" not found`);
    return registered.get(specifier);
  },
  has(specifier: string): boolean {
    return registered.has(specifier);
  },
};

export default Modules;

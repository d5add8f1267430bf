// How a store is made of its domains' halves (docs/store-layout.md): their methods become its own.
import type { DomainStores } from './types.ts';

/**
 * Gives `store` every method of `domains` as its own property, except a method the store's class
 * already has: a subclass may override one (a test's store that fails on purpose does).
 */
export function adoptDomains(store: object, domains: DomainStores): void {
  for (const [name, method] of Object.entries(domains)) {
    if (!(name in store)) Object.defineProperty(store, name, { value: method, writable: true, configurable: true, enumerable: true });
  }
}

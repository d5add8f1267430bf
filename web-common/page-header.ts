// The header a page's client puts on every request and its server's request guard asks for
// (docs/web-kit.md): a cross-site form cannot send it, and a cross-site fetch cannot send it without a
// CORS preflight that the project's servers never grant. Both halves of the kit read it from here.
export const PAGE_HEADER = 'x-fleet-page';

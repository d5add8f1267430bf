// The annotations the project's schemas carry besides JSON Schema's own keywords (docs/schema-library.md):
// what a value should look like, in words, and which catalog code a bad value gets. Apart from the
// validator (validator.ts, Ajv) so that a schema a page also reads brings no validator into its bundle.
export const EXPECTED = 'x-expected';
export const ERROR_CODE = 'x-error-code';

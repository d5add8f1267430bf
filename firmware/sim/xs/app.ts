// The app bundle of a virtual board running platform/moddable: the emulated SDK's globals first,
// then the runtime that boots the platform when the host says so (runtime.ts).
import './globals.ts';
import './runtime.ts';

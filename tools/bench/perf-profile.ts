// CPU-time profiles with Linux perf, for `npm run bench:fleet -- --perf` (docs/fleet-scale.md). A V8
// CPU profile samples each JavaScript thread by the wall clock: on a machine where every core is busy
// it charges a thread's time off the CPU to whatever runs when it is scheduled again, and it never sees
// libuv's pool (where the signature checks run), OpenSSL, SQLite's C code or the kernel. perf samples
// the CPU: every thread of the processes given, user and kernel, with JavaScript frames named through
// the map node writes with --perf-basic-prof-only-functions. Each sample is put in a category by its
// shared object and symbol (the first rule that matches); the figures are CPU milliseconds.
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';

/** node flags for a process to be profiled by perf: a map of its JIT code, interpreted frames named. */
export const PERF_NODE_FLAGS = ['--perf-basic-prof-only-functions', '--interpreted-frames-native-stack'];

/** Sampling rate, per CPU: one sample per ~1 ms of CPU. */
const PERF_HZ = 999;

export function perfAvailable(): boolean {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts recording every thread of `pids` (and the threads they start); stop() ends it and waits for the file. */
export function recordPerf(pids: number[], file: string): { stop(): Promise<void> } {
  const child = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-o', file, '-p', pids.join(',')], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    async stop() {
      child.kill('SIGINT');
      await exited;
    },
  };
}

const JS_RULES: [string, RegExp][] = [
  ['JS: the store (cloud/store)', /cloud\/store\//],
  ['JS: signature check (cloud/auth)', /cloud\/auth\//],
  ['JS: Express and its router', /node_modules\/(express|router|finalhandler|body-parser|path-to-regexp|qs)\//],
  ['JS: the cloud\'s own code', /\/cloud\//],
  ['JS: the simulator and the bench', /\/tools\//],
  ['JS: node HTTP, sockets and streams', /node:(_http|net|internal\/(streams|stream_base|http|timers|js_stream))/],
  ['JS: node crypto glue', /node:internal\/crypto/],
  ['JS: other (node internals, libraries)', /./],
];

const NATIVE_RULES: [string, (dso: string, sym: string, kernel: boolean) => boolean][] = [
  ['SQLite (better-sqlite3)', (dso) => /better_sqlite3/.test(dso)],
  ['kernel: TCP over loopback', (_d, s, k) => k && /tcp|skb|sock|inet|ip_|_ip|net_|napi|loopback|dev_|sk_|nf_|netif/.test(s)],
  ['kernel: file I/O (the WAL, checkpoints)', (_d, s, k) => k && /ext4|jbd2|filemap|folio|iomap|writeback|generic_perform|fsync|page_cache|pagecache|blk|bio|vfs_write|vfs_read|file_|xas_|mpage/.test(s)],
  ['kernel: copies to and from user memory', (_d, s, k) => k && /copy_user|copy_to|copy_from|_copy|memcpy|memmove|rep_mov/.test(s)],
  ['kernel: memory (page faults, mappings)', (_d, s, k) => k && /page_fault|clear_page|anonymous|handle_mm|mmap|munmap|madvise|zap_|alloc_pages|free_pages|lru|rmqueue|folio|memcg|__mem/.test(s)],
  ['kernel: scheduling, epoll, futex, timers, syscalls', (_d, _s, k) => k],
  ['OpenSSL: ECDSA P-256 (sign, verify)', (_d, s) => /ecp_nistz256|nistz256|bn_|BN_|ec_GFp|EC_|ecdsa|ECDSA|ossl_ec|mont/.test(s)],
  ['OpenSSL: SHA-256', (_d, s) => /sha256|SHA256/.test(s)],
  ['OpenSSL: AES', (_d, s) => /aes|AES/.test(s)],
  ['OpenSSL: other (keys, decoders, EVP)', (_d, s) => /OPENSSL|CRYPTO_|EVP_|ossl_|OSSL_|ERR_|ASN1|asn1|decoder|OBJ_|X509|PEM_|evp_/.test(s)],
  ['V8: garbage collection', (_d, s) => /Scaveng|MarkCompact|Marking|Sweep|Evacuat|GCTracer|Heap::|MinorM|Mark(er|ing)|CppHeap|MemoryAllocator|Compactor/.test(s)],
  ['node: HTTP parser (llhttp)', (_d, s) => /llhttp/.test(s)],
  ['libuv', (_d, s) => /^uv_|^uv__/.test(s)],
  ['V8: interpreter, builtins, runtime', (_d, s) => /Builtins_|v8::|Runtime_|Builtin|Interpreter/.test(s)],
  ['node: C++ (streams, buffers, crypto jobs)', (_d, s) => /node::/.test(s)],
  ['libc: memcpy, memset', (d, s) => /libc/.test(d) && /mem(cpy|move|set)/.test(s)],
  ['libc: malloc, free', (d, s) => /libc|libstdc/.test(d) && /malloc|free|_int_|operator (new|delete)|chunk/.test(s)],
  ['libc, other', (d) => /libc|libstdc|ld-linux|libm/.test(d)],
];

export interface PerfSummary {
  totalMs: number;
  categories: { name: string; ms: number }[];
  top: { dso: string; sym: string; ms: number }[];
}

function categorize(dso: string, sym: string, kernel: boolean): string {
  if (/^\[JIT\]|perf-\d+\.map/.test(dso) || /^(JS|LazyCompile|Function|Eval):/.test(sym)) {
    return JS_RULES.find(([, re]) => re.test(sym))![0];
  }
  return NATIVE_RULES.find(([, test]) => test(dso, sym, kernel))?.[0] ?? `other (${dso})`;
}

/** CPU time by category and the top symbols, over one or several perf.data files (deleted once read). */
export function summarizePerf(files: string[], top = 20): PerfSummary {
  const categories = new Map<string, number>();
  const symbols = new Map<string, { dso: string; sym: string; ms: number }>();
  let total = 0;
  for (const file of files) {
    let text = '';
    try {
      text = execFileSync('perf', ['report', '-i', file, '--stdio', '--no-children', '-g', 'none', '--sort', 'dso,sym', '-F', 'period,dso,sym', '--percent-limit', '0'], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch {
      continue;
    } finally {
      rmSync(file, { force: true });
      rmSync(`${file}.old`, { force: true });
    }
    for (const line of text.split('\n')) {
      const m = /^\s*(\d+)\s+(.+?)\s+\[([.k])\]\s+(.*)$/.exec(line);
      if (!m) continue;
      const ms = Number(m[1]) / 1e6; // cpu-clock periods are nanoseconds
      const [dso, kernel, sym] = [m[2]!.trim(), m[3] === 'k', m[4]!.trim()];
      const cat = categorize(dso, sym, kernel);
      categories.set(cat, (categories.get(cat) ?? 0) + ms);
      total += ms;
      const key = `${dso}\u0000${sym}`;
      const s = symbols.get(key) ?? { dso, sym, ms: 0 };
      s.ms += ms;
      symbols.set(key, s);
    }
  }
  return {
    totalMs: total,
    categories: [...categories].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms),
    top: [...symbols.values()].sort((a, b) => b.ms - a.ms).slice(0, top),
  };
}

/** The summary as lines: µs of CPU per unit (an upload, a device) by category, then the top symbols. */
export function formatPerf(s: PerfSummary, units: number, unit: string): string[] {
  const us = (ms: number) => ((ms * 1000) / Math.max(1, units)).toFixed(0).padStart(6);
  return [
    ...s.categories.map((c) => `${us(c.ms)} µs  ${c.name}`),
    `${us(s.totalMs)} µs  CPU per ${unit}, every thread (perf, cpu-clock)`,
    '  top symbols:',
    ...s.top.map((t) => `${us(t.ms)} µs  ${t.sym.slice(0, 100)}  (${t.dso.replace(/^.*\//, '')})`),
  ];
}

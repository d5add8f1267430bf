/*
 * A virtual board's firmware process: what the ESP32-S3's second-stage bootloader hands the app over
 * to. It loads the firmware the Moddable SDK built for the Linux host (`mcconfig -p lin`: mc.so, whose
 * fxScreenLaunch prepares the XS machine with the manifest's `creation` and runs its main, as the
 * SDK's simulator does: build/simulators/modules/screen.c) and runs the GLib main loop that the SDK's
 * Linux timers, sockets and serial ports use. Headless: no GTK, no screen.
 *
 *   loader <mc.so>
 *
 * File descriptors, from the board's Node side (firmware/virtual-esp32/firmware-process.ts):
 *   3, 4  the channel to the chip beneath (sdk-host/natives/fw_host.h)
 *   5     UART0's pins: bytes to and from the chip's console. The firmware opens its UART with the
 *         SDK's `embedded:io/serial` (modules/io/serial/lin/serial.c), which needs a terminal: the
 *         loader makes a pseudo-terminal, keeps its other end at fd 9 (config.console.device is
 *         /proc/self/fd/9) and copies bytes between the pseudo-terminal and fd 5.
 *   1     trace() output.
 * Exit status: 0 powered off (SIGTERM), 3 esp_restart, 4 a panic (a fault in native code: the chip's
 * panic handler prints a backtrace and resets; so does this, with the host's addresses), 64 + XS's
 * status when XS aborts (65: memory full, as xsMemoryFullExit on the chip, where abort restarts the
 * chip), 70 the chip is gone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <fcntl.h>
#include <glib.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "screen.h"

#define kUartPins 5
#define kUartDevice 9

static GMainLoop *gLoop;
static int gUart = -1;
static int gUartCopied = 0;

#define kPanicExit 4

static void copy(int from, int to);

/*
 * What the firmware wrote on its UART and this loop has not copied yet: copied now, before the process
 * ends. ESP-IDF's esp_restart and its panic handler wait for the UART's FIFO to empty
 * (esp_rom_uart_tx_wait_idle), so the last line before a reset reaches the console.
 */
static void drainUart(void)
{
	if (gUart < 0)
		return;
	for (int i = 0; i < 256; i++) {
		int before = gUartCopied;
		copy(gUart, kUartPins);
		if (gUartCopied == before)
			break;
	}
}

/* The panic handler: what faulted, and a backtrace (addresses in mc.so; addr2line on the unstripped
 * build names them), then a reset. Only async-signal-safe calls. */
static void onFault(int signal)
{
	void *frames[48];
	char line[96];
	int count = backtrace(frames, 48);
	int length = snprintf(line, sizeof(line), "Guru Meditation Error: signal %d (%s). Backtrace:\n", signal, strsignal(signal));
	write(2, line, length);
	backtrace_symbols_fd(frames, count, 2);
	drainUart();
	_exit(kPanicExit);
}

static const char *(*gAbortReason)(void *machine, int status) = NULL;

static void onAbort(txScreen *screen, int status)
{
	/* screen.c's fxAbort has printed "XS abort: <why>"; the chip's adds an unhandled exception's message. */
	const char *reason = gAbortReason ? (*gAbortReason)(screen->machine, status) : "";
	if (reason && *reason)
		fprintf(stderr, "XS abort: reason: %s\n", reason);
	drainUart();
	fflush(stdout);
	fflush(stderr);
	_exit(64 + status);
}

/* The natives' hook before each idle (fw_host_channel.c: the stack's peak across the screen's samples). */
static void (*gBeforeIdle)(void) = NULL;

static gboolean onIdle(gpointer data)
{
	txScreen *screen = data;
	if (gBeforeIdle)
		(*gBeforeIdle)();
	if (screen->idle)
		(*screen->idle)(screen);
	return G_SOURCE_CONTINUE;
}

static guint gIdle = 0;

static void onStart(txScreen *screen, double interval)
{
	if (!gIdle)
		gIdle = g_timeout_add((guint)(interval > 0 ? interval : 5), onIdle, screen);
}

static void onStop(txScreen *screen)
{
	if (gIdle) {
		g_source_remove(gIdle);
		gIdle = 0;
	}
}

static void nothing(txScreen *screen) {}
static void nothingMessage(txScreen *screen, char *buffer, int size) {}

static void copy(int from, int to)
{
	char buffer[1024];
	ssize_t n = read(from, buffer, sizeof(buffer));
	if ((n < 0) && ((EAGAIN == errno) || (EINTR == errno) || (EIO == errno)))
		return;
	if (n <= 0) {
		if (from == kUartPins) _exit(70); /* the chip's side is gone */
		return;
	}
	for (ssize_t at = 0; at < n;) {
		ssize_t written = write(to, buffer + at, n - at);
		if ((written < 0) && (EAGAIN == errno || EINTR == errno)) {
			g_usleep(1000);
			continue;
		}
		if (written <= 0) return;
		at += written;
		gUartCopied += (int)written;
	}
}

static gboolean onPins(gint fd, GIOCondition condition, gpointer data)
{
	copy(kUartPins, gUart);
	return G_SOURCE_CONTINUE;
}

static gboolean onTerminal(gint fd, GIOCondition condition, gpointer data)
{
	copy(gUart, kUartPins);
	return G_SOURCE_CONTINUE;
}

/* The UART as a pseudo-terminal: its controller end here, the firmware's end at fd 9. */
static void openUart(void)
{
	struct termios raw;
	gUart = posix_openpt(O_RDWR | O_NOCTTY);
	if ((gUart < 0) || grantpt(gUart) || unlockpt(gUart)) {
		perror("loader: pseudo-terminal");
		exit(2);
	}
	int device = open(ptsname(gUart), O_RDWR | O_NOCTTY);
	if (device < 0) {
		perror("loader: pseudo-terminal device");
		exit(2);
	}
	tcgetattr(device, &raw);
	cfmakeraw(&raw);
	tcsetattr(device, TCSANOW, &raw);
	if (device != kUartDevice) {
		dup2(device, kUartDevice);
		close(device);
	}
	g_unix_set_fd_nonblocking(gUart, TRUE, NULL);
	g_unix_set_fd_nonblocking(kUartPins, TRUE, NULL);
	g_unix_fd_add(kUartPins, G_IO_IN | G_IO_HUP | G_IO_ERR, onPins, NULL);
	g_unix_fd_add(gUart, G_IO_IN, onTerminal, NULL);
}

static gboolean onSignal(gpointer data)
{
	g_main_loop_quit(gLoop);
	return G_SOURCE_REMOVE;
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: loader <mc.so>\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct sigaction fault = {0};
	fault.sa_handler = onFault;
	fault.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &fault, NULL);
	sigaction(SIGBUS, &fault, NULL);
	sigaction(SIGFPE, &fault, NULL);
	sigaction(SIGILL, &fault, NULL);
	sigaction(SIGABRT, &fault, NULL);
	gLoop = g_main_loop_new(NULL, FALSE);
	/* A chip has no SIGPIPE: a write to a closed peer fails with EPIPE and the caller sees it. */
	signal(SIGPIPE, SIG_IGN);
	g_unix_signal_add(SIGTERM, onSignal, NULL);
	g_unix_signal_add(SIGINT, onSignal, NULL);
	openUart();

	void *library = dlopen(argv[1], RTLD_NOW);
	if (!library) {
		fprintf(stderr, "loader: %s\n", dlerror());
		return 2;
	}
	txScreenLaunchProc launch = (txScreenLaunchProc)dlsym(library, "fxScreenLaunch");
	void (*attach)(void *) = (void (*)(void *))dlsym(library, "fwHostAttach");
	gAbortReason = (const char *(*)(void *, int))dlsym(library, "fwHostAbortReason");
	gBeforeIdle = (void (*)(void))dlsym(library, "fwHostBeforeIdle");
	void (**beforeExit)(void) = (void (**)(void))dlsym(library, "fwHostBeforeExit");
	if (beforeExit)
		*beforeExit = drainUart;
	if (!launch || !attach) {
		fprintf(stderr, "loader: %s is not a virtual board's firmware (fxScreenLaunch, fwHostAttach)\n", argv[1]);
		return 2;
	}
	/* The SDK's Piu screen is there but unused: the board's panel is an SSD1306 on I2C. */
	int width = 128, height = 64;
	txScreen *screen = calloc(1, sizeof(txScreen) - 1 + (width * height * screenBytesPerPixel));
	if (!screen) return 2;
	screen->abort = onAbort;
	screen->bufferChanged = nothing;
	screen->formatChanged = nothing;
	screen->post = nothingMessage;
	screen->start = onStart;
	screen->stop = onStop;
	screen->width = width;
	screen->height = height;
	mxCreateMutex(&screen->workersMutex);

	(*launch)(screen);
	if (!screen->machine) {
		fprintf(stderr, "loader: the firmware did not start\n");
		return 2;
	}
	(*attach)(screen->machine);
	g_main_loop_run(gLoop);
	return 0;
}

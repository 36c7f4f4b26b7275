/*
 * rocmd's command-line table (common/cli.h): its options with their help.
 * main.c parses with it and prints --help from it; the build generates
 * rocmd.8 from it (tools/cli-doc.c).
 */
#include "common/cli.h"
#include "common/paths.h"

/* The table is laid out by hand, a row per option. */
/* clang-format off */

extern const struct cli_prog rocmd_prog;

static const struct cli_opt opts[] = {
	{"foreground", 'f', CLI_FLAG, NULL,
	 "stay in the foreground (as under systemd); without it rocmd detaches once the socket "
	 "serves, or exits with the reason it could not start",
	 NULL, 0, 0, 0},
	{"state-dir", 's', CLI_VALUE, "DIR",
	 "the state folder: database, lock, package store, kept originals", "@dir", 0, 0, 0},
	{"socket", 'S', CLI_VALUE, "PATH", "the socket to listen on (" ROCMD_SYSTEM_SOCKET ")",
	 "@file", 0, 0, 0},
	{"config", 'c', CLI_VALUE, "FILE",
	 "the configuration file (JSON, docs/CONFIG.md); unknown keys and wrong types stop rocmd "
	 "with the key's path named",
	 "@file", 0, 0, 0},
	{"log-level", 'l', CLI_CHOICE, "LEVEL", "the log level", "error|warning|notice|info|debug", 0,
	 0, 0},
	{"root", 'r', CLI_VALUE, "DIR",
	 "find SDKs and GPUs under DIR instead of / (/opt, /usr, /sys, /etc, and Windows drives "
	 "as DIR/c/...), for tests",
	 "@dir", 0, 0, 0},
	{"sdk-layout", 0, CLI_CHOICE, "KIND",
	 "which SDK layout rules apply under --root (windows is for tests on Linux)",
	 "linux|windows", 0, 0, 0},
	{"version", 'V', CLI_FLAG, NULL, "print the version and exit", NULL, 0, 0, CLI_OPT_ALONE},
	{NULL, 0, CLI_FLAG, NULL, NULL, NULL, 0, 0, 0},
};

static const struct cli_cmd root = {
	"rocmd", "", 0, 0, NULL,
	"keeps tuned rocBLAS libraries in sync with the HIP SDKs on this machine",
	"Keeps tuned rocBLAS libraries in sync with the HIP SDKs on this machine.",
	opts, NULL, NULL, NULL, 0,
};

const struct cli_prog rocmd_prog = {
	"rocmd",
	8,
	"keeps tuned rocBLAS libraries in sync with the HIP SDKs on this machine",
	&root,
	"rocmd discovers and watches HIP SDK installs and AMD GPUs, keeps a store of tuned rocBLAS "
	"library packages, deploys the matching one into each SDK with a backup of the vendor's "
	"originals, and answers rocmctl(1) over a local socket (a named pipe on Windows). Every "
	"local user may read its state; changing anything needs root or membership of the admin "
	"group (ipc.admin_group, default rocm), or an elevated Administrator on Windows.\n\n"
	"Run it as the service it is: systemctl enable --now rocmd on Linux (rocmd.service, "
	"Type=notify, with a watchdog; optional socket activation through rocmd.socket), or rocmd "
	"install and rocmd start from an elevated prompt on Windows (rocmd.exe install, uninstall, "
	"start, stop, and purge, which removes %ProgramData%\\rocmd: the database, the package "
	"store and the backups of the originals).\n\n"
	"SIGTERM and SIGINT stop rocmd gracefully (replies in flight get 5 seconds); SIGHUP reopens "
	"the log file.",
	"  0\ta clean stop.\n\n"
	"  1\ta runtime failure.\n\n"
	"  2\ta usage error: an unknown option, a missing or bad value, a --root that is not a "
	"folder.\n\n"
	"  3\tan invalid configuration.\n\n"
	"  4\tanother rocmd holds the state folder.\n\n"
	"  5\tthe database cannot be opened.\n\n"
	"On Windows the same code is the service-specific exit code of a failed start.",
	"  ROCMD_SOCKET\tthe socket rocmctl uses when it is given none.",
	"  /etc/rocmd/rocmd.json\tthe configuration.\n\n"
	"  /var/lib/rocmd\tthe state (%ProgramData%\\rocmd on Windows).\n\n"
	"  " ROCMD_SYSTEM_SOCKET "\tthe socket.\n\n"
	"  /usr/lib/systemd/system/rocmd.service, rocmd.socket\tthe units; the SDK folders rocmd "
	"may write to come from a drop-in written by rocmd-systemd-generator from the "
	"configuration's sdk.extra_roots.",
	"  rocmd --foreground --log-level debug\trun it by hand, its log on the terminal.\n\n"
	"  systemctl enable --now rocmd\tthe service.",
	"rocmctl(1), rocmtune(1), systemd.exec(5), sd_notify(3)",
};
/* clang-format on */

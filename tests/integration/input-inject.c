/*
 * Test helper: user input for the idle monitor's tests and benchmark.
 *
 *   input-inject uinput       creates a virtual keyboard through /dev/uinput,
 *                             prints its /dev/input/eventN path, then presses
 *                             and releases a key for every line read on stdin;
 *                             exits 77 (skip) with the reason when /dev/uinput
 *                             cannot be opened
 *   input-inject fifo PATH    writes one key press (struct input_event, the
 *                             current time as its time stamp) to PATH, a FIFO
 *                             standing in for /dev/input/eventN in a sandbox
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

static int
emit(int fd, int type, int code, int value)
{
	struct input_event ev;
	struct timeval tv;

	memset(&ev, 0, sizeof(ev));
	gettimeofday(&tv, NULL);
	ev.input_event_sec = tv.tv_sec;
	ev.input_event_usec = tv.tv_usec;
	ev.type = (unsigned short)type;
	ev.code = (unsigned short)code;
	ev.value = value;
	return write(fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev) ? 0 : -1;
}

static int
key(int fd)
{
	return emit(fd, EV_KEY, KEY_SPACE, 1) || emit(fd, EV_SYN, SYN_REPORT, 0) ||
	       emit(fd, EV_KEY, KEY_SPACE, 0) || emit(fd, EV_SYN, SYN_REPORT, 0);
}

static int
run_uinput(void)
{
	struct uinput_setup us;
	char name[64], line[64];
	int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK);

	if (fd < 0) {
		printf("skip: cannot open /dev/uinput: %s\n", strerror(errno));
		fflush(stdout);
		return 77;
	}
	if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0 || ioctl(fd, UI_SET_KEYBIT, KEY_SPACE) < 0) {
		printf("skip: uinput refuses key events: %s\n", strerror(errno));
		return 77;
	}
	memset(&us, 0, sizeof(us));
	us.id.bustype = BUS_VIRTUAL;
	us.id.vendor = 0x1234;
	us.id.product = 0x5678;
	snprintf(us.name, sizeof(us.name), "rocmd test keyboard");
	if (ioctl(fd, UI_DEV_SETUP, &us) < 0 || ioctl(fd, UI_DEV_CREATE) < 0) {
		printf("skip: cannot create a uinput device: %s\n", strerror(errno));
		return 77;
	}
	if (ioctl(fd, UI_GET_SYSNAME(sizeof(name)), name) < 0) {
		printf("skip: UI_GET_SYSNAME: %s\n", strerror(errno));
		return 77;
	}
	usleep(200000); /* the kernel (devtmpfs) creates /dev/input/eventN */
	printf("/sys/devices/virtual/input/%s\n", name);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (key(fd) < 0)
			fprintf(stderr, "input-inject: write: %s\n", strerror(errno));
	}
	ioctl(fd, UI_DEV_DESTROY);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	int fd;

	if (argc == 2 && !strcmp(argv[1], "uinput"))
		return run_uinput();
	if (argc != 3 || strcmp(argv[1], "fifo") != 0) {
		fprintf(stderr, "usage: input-inject uinput | input-inject fifo PATH\n");
		return 2;
	}
	fd = open(argv[2], O_WRONLY | O_NONBLOCK);
	if (fd < 0 || key(fd) < 0) {
		fprintf(stderr, "input-inject: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

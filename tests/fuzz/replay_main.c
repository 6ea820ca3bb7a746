/* Replay driver: feeds every file of the corpus directories (or files)
 * named on the command line to LLVMFuzzerTestOneInput, so `make check`
 * exercises the fuzz targets without clang.  Exit status 0 when all inputs
 * ran (a crash or sanitizer report fails the test). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 4096;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]) < 0)
				return 1;
			n++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			if (replay_file(path) < 0) {
				closedir(d);
				return 1;
			}
			n++;
		}
		closedir(d);
	}
	/* also run the empty input once */
	LLVMFuzzerTestOneInput((const uint8_t *)"", 0);
	printf("replayed %lu inputs\n", n);
	return 0;
}

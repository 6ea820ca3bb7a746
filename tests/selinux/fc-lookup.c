/* fc-lookup FILE_CONTEXTS TYPE PATH...: print the context the file
 * contexts give each PATH (TYPE f, d or l), or "-" where they give none.
 * For tests/system/test_selinux.py, which has no libselinux binding. */
#include <selinux/label.h>
#include <selinux/selinux.h>
#include <stdio.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	const struct selinux_opt opt = { SELABEL_OPT_PATH, argc > 1 ? argv[1] : "" };
	struct selabel_handle *h;
	int type;

	if (argc < 3)
		return 2;
	type = argv[2][0] == 'd' ? S_IFDIR : argv[2][0] == 'l' ? S_IFLNK : S_IFREG;
	h = selabel_open(SELABEL_CTX_FILE, &opt, 1);
	if (!h) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		char *con = NULL;

		if (selabel_lookup(h, &con, argv[i], type) < 0)
			con = NULL;
		printf("%s\n", con ? con : "-");
		freecon(con);
	}
	selabel_close(h);
	return 0;
}

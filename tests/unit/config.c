/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c -- unit tests of the rpmemd configuration file (daemon/config/config.c) */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "pmem.h"

/*
 * A scratch directory holds the configuration file, the region
 * directories and a fake mount table in which dax/ is a DAX mount and
 * nodax/ and inode/ (dax=inode: files need not be DAX) are not:
 *	a/ a/inner/ b/ c/ dax/r/ nodax/r/ inode/r/ plainfile mounts rpmemd.conf
 * /dev/null stands in for a device DAX (the parser checks only that a
 * devdax path is a character device).
 */
static char dir[PATH_MAX];
static char conf[PATH_MAX + 16];
static char mounts[PATH_MAX + 16];
static char err[1024];
static struct rpmemd_config cfg;

static void mkdir_in(const char *sub)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/rpmem-unit-config-XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, dir))
		return -1;
	snprintf(conf, sizeof(conf), "%s/rpmemd.conf", dir);
	snprintf(mounts, sizeof(mounts), "%s/mounts", dir);
	static const char *const subs[] = { "a",     "a/inner", "b",
					    "c",     "dax",	"dax/r",
					    "nodax", "nodax/r", "inode",
					    "inode/r" };
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		mkdir_in(subs[i]);
	char p[PATH_MAX + 64], m[4 * PATH_MAX];
	snprintf(p, sizeof(p), "%s/plainfile", dir);
	write_file(p, "not a directory\n");
	snprintf(m, sizeof(m),
		 "/dev/root / ext4 rw,relatime 0 0\n"
		 "/dev/pmem0 %s/dax ext4 rw,relatime,dax=always 0 0\n"
		 "/dev/pmem1 %s/nodax ext4 rw,relatime 0 0\n"
		 "/dev/pmem2 %s/inode xfs rw,relatime,dax=inode 0 0\n",
		 dir, dir, dir);
	write_file(mounts, m);
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* load -- write the file (printf-style, %1$s = scratch dir) and load it */
static int __attribute__((format(printf, 1, 2))) load(const char *fmt, ...)
{
	char text[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	write_file(conf, text);
	memset(&cfg, 0, sizeof(cfg));
	memset(err, 0, sizeof(err));
	return rpmemd_config_load_mounts(conf, mounts, &cfg, err, sizeof(err));
}

/* has -- the error message contains s */
#define has(s)                                                                \
	do {                                                                  \
		if (!strstr(err, (s)))                                        \
			fail_msg("'%s' not in error '%s'", (s), err);         \
	} while (0)

/* at -- the error message names rpmemd.conf:line */
static void at(int line)
{
	char want[PATH_MAX + 64];
	snprintf(want, sizeof(want), "%s:%d: ", conf, line);
	has(want);
}

/* --- good files ---------------------------------------------------------- */

static void rpmemd_config_load__empty_file_gives_defaults(void **state)
{
	(void)state;
	assert_int_equal(load("# nothing here\n"), 0);
	assert_string_equal(cfg.file, conf);
	assert_int_equal(cfg.nlisten, 1);
	assert_string_equal(cfg.listen[0], "127.0.0.1");
	assert_string_equal(cfg.port, RPMEM_DEFAULT_PORT);
	assert_int_equal(cfg.log_level, LOG_INFO);
	assert_int_equal(cfg.log_target, RPMEMD_LOG_STDERR);
	assert_int_equal(cfg.max_sessions, 64);
	assert_int_equal(cfg.allow_insecure_remote, 0);
	assert_int_equal(cfg.require_auth, 0);
	assert_int_equal(cfg.regions_auto, 0);
	assert_int_equal(cfg.nregions, 0);
	assert_int_equal(cfg.limits.handshake_timeout, 10);
	assert_int_equal(cfg.limits.frame_timeout, 60);
	assert_int_equal(cfg.limits.writer_idle_timeout, 600);
	assert_int_equal(cfg.limits.session_idle_timeout, 600);
	assert_int_equal(cfg.limits.reader_idle_timeout, 600);
	assert_int_equal(cfg.limits.max_per_identity, 0); /* max_sessions/2 */
	assert_int_equal(cfg.limits.admin_reserved, 2);
	assert_int_equal(cfg.limits.max_unauth, 64);
	assert_int_equal(cfg.limits.max_unauth_per_addr, 8);
	assert_true(cfg.limits.rdma_staging_max == RPMEMD_STAGING_AUTO);
	assert_string_equal(err, "");
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__limits_group(void **state)
{
	(void)state;
	assert_int_equal(load("limits = { handshake_timeout = 3;"
			      " frame_timeout = 4; writer_idle_timeout = 0;"
			      " max_unauthenticated = 5;"
			      " max_unauthenticated_per_address = 6;"
			      " session_idle_timeout = 0;"
			      " reader_idle_timeout = 9;"
			      " max_sessions_per_identity = 3;"
			      " admin_reserved_sessions = 0; };\n"),
			 0);
	assert_int_equal(cfg.limits.session_idle_timeout, 0);
	assert_int_equal(cfg.limits.reader_idle_timeout, 9);
	assert_int_equal(cfg.limits.max_per_identity, 3);
	assert_int_equal(cfg.limits.admin_reserved, 0);
	assert_int_equal(cfg.limits.handshake_timeout, 3);
	assert_int_equal(cfg.limits.frame_timeout, 4);
	assert_int_equal(cfg.limits.writer_idle_timeout, 0);
	assert_int_equal(cfg.limits.max_unauth, 5);
	assert_int_equal(cfg.limits.max_unauth_per_addr, 6);
	rpmemd_config_free(&cfg);
	/* the ones left out keep their defaults */
	assert_int_equal(load("limits = { frame_timeout = 7; };\n"), 0);
	assert_int_equal(cfg.limits.frame_timeout, 7);
	assert_int_equal(cfg.limits.handshake_timeout, 10);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__limits_out_of_range_or_unknown(void **state)
{
	(void)state;
	assert_int_equal(load("\nlimits = { handshake_timeout = 0; };\n"),
			 -EINVAL);
	at(2);
	has("handshake_timeout");
	has("out of range");
	assert_int_equal(load("limits = { max_unauthenticated = 0; };\n"),
			 -EINVAL);
	has("max_unauthenticated");
	assert_int_equal(load("limits = { max_sessions_per_identity = 0; };\n"),
			 -EINVAL);
	has("max_sessions_per_identity");
	has("out of range");
	assert_int_equal(load("limits = { hello_timeout = 5; };\n"), -EINVAL);
	has("limits.hello_timeout");
	has("unknown setting");
	assert_int_equal(load("limits = 5;\n"), -EINVAL);
	has("must be a group");
}

static void rpmemd_config_load__rdma_staging_max_size_or_bytes(void **state)
{
	(void)state;
	assert_int_equal(load("limits = { rdma_staging_max = \"4G\"; };\n"),
			 0);
	assert_true(cfg.limits.rdma_staging_max == 4ull << 30);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("limits = { rdma_staging_max = \"512MiB\"; };\n"),
			 0);
	assert_true(cfg.limits.rdma_staging_max == 512ull << 20);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("limits = { rdma_staging_max = 1048576; };\n"),
			 0);
	assert_true(cfg.limits.rdma_staging_max == 1048576);
	rpmemd_config_free(&cfg);
	/* 0: no pool is served through a staging copy */
	assert_int_equal(load("limits = { rdma_staging_max = 0; };\n"), 0);
	assert_true(cfg.limits.rdma_staging_max == 0);
	rpmemd_config_free(&cfg);
	/* the other limits keep their defaults */
	assert_int_equal(load("limits = { rdma_staging_max = \"1M\"; };\n"),
			 0);
	assert_int_equal(cfg.limits.frame_timeout, 60);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__rdma_staging_max_invalid(void **state)
{
	(void)state;
	assert_int_equal(load("\nlimits = { rdma_staging_max = \"lots\"; };\n"),
			 -EINVAL);
	at(2);
	has("limits.rdma_staging_max");
	has("must be a size");
	assert_int_equal(load("limits = { rdma_staging_max = -1; };\n"),
			 -EINVAL);
	has("limits.rdma_staging_max");
	has("negative");
	assert_int_equal(load("limits = { rdma_staging_max = true; };\n"),
			 -EINVAL);
	has("must be a size");
	/* a top-level rdma_staging_max is not where the limits live */
	assert_int_equal(load("rdma_staging_max = \"4G\";\n"), -EINVAL);
	has("unknown setting");
}

static void rpmemd_config_load__minimal_region(void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"a\";"
			      " path = \"%s/a\"; } );\n",
			      dir),
			 0);
	assert_int_equal(cfg.nregions, 1);
	assert_string_equal(cfg.regions[0].name, "a");
	assert_int_equal(cfg.regions[0].type, RPMEM_REGION_DIR);
	assert_int_equal(cfg.regions[0].direct_pmem, 0);
	rpmemd_config_free(&cfg);
	assert_null(cfg.regions);
	assert_int_equal(cfg.nregions, 0);
}

static void rpmemd_config_load__full_file(void **state)
{
	(void)state;
	int ret = load("listen = [\"127.0.0.1\", \"::1\", \"localhost\"];\n"
		       "port = 7000;\n"
		       "log = { level = \"debug\"; target = \"syslog\"; };\n"
		       "max_sessions = 8;\n"
		       "regions_auto = false;\n"
		       "auth = { require_auth = false; };\n"
		       "allow_insecure_remote = false;\n"
		       "regions = (\n"
		       "  { name = \"a\"; type = \"dir\"; path = \"%1$s/./a/\"; }\n"
		       ");\n",
		       dir);
	assert_int_equal(ret, 0);
	assert_int_equal(cfg.nlisten, 3);
	assert_string_equal(cfg.listen[0], "127.0.0.1");
	assert_string_equal(cfg.listen[1], "::1");
	assert_string_equal(cfg.listen[2], "localhost");
	assert_string_equal(cfg.port, "7000");
	assert_int_equal(cfg.log_level, LOG_DEBUG);
	assert_int_equal(cfg.log_target, RPMEMD_LOG_SYSLOG);
	assert_int_equal(cfg.max_sessions, 8);
	assert_int_equal(cfg.nregions, 1);
	/* the path is stored canonical */
	char want[PATH_MAX + 8];
	snprintf(want, sizeof(want), "%s/a", dir);
	assert_string_equal(cfg.regions[0].path, want);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__several_regions(void **state)
{
	(void)state;
	int ret = load("regions = (\n"
		       "  { name = \"a\"; path = \"%1$s/a\"; },\n"
		       "  { name = \"b-2\"; type = \"dir\"; path = \"%1$s/b\"; },\n"
		       "  { name = \"pm.0\"; type = \"fsdax\"; path = \"%1$s/dax/r\";\n"
		       "    direct_pmem = true; },\n"
		       "  { name = \"c_3\"; type = \"dir\"; path = \"%1$s/c\"; }\n"
		       ");\n",
		       dir);
	assert_int_equal(ret, 0);
	assert_int_equal(cfg.nregions, 4);
	static const char *const names[] = { "a", "b-2", "pm.0", "c_3" };
	static const char *const subs[] = { "a", "b", "dax/r", "c" };
	for (unsigned i = 0; i < 4; i++) {
		char want[PATH_MAX + 8];
		snprintf(want, sizeof(want), "%s/%s", dir, subs[i]);
		assert_string_equal(cfg.regions[i].name, names[i]);
		assert_string_equal(cfg.regions[i].path, want);
	}
	assert_int_equal(cfg.regions[2].type, RPMEM_REGION_FSDAX);
	assert_int_equal(cfg.regions[2].direct_pmem, 1);
	assert_int_equal(cfg.regions[3].type, RPMEM_REGION_DIR);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__devdax_region(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n"
			      "  { name = \"d\"; type = \"devdax\"; path = \"/dev/null\";\n"
			      "    direct_pmem = true; },\n"
			      "  { name = \"a\"; path = \"%s/a\"; }\n"
			      ");\n",
			      dir),
			 0);
	assert_int_equal(cfg.nregions, 2);
	assert_string_equal(cfg.regions[0].name, "d");
	assert_int_equal(cfg.regions[0].type, RPMEM_REGION_DEVDAX);
	assert_string_equal(cfg.regions[0].path, "/dev/null");
	assert_int_equal(cfg.regions[0].direct_pmem, 1);
	assert_int_equal(cfg.regions[0].is_auto, 0);
	rpmemd_config_free(&cfg);
}

/* undo_dir_err -- a devdax region "d" with undo_dir u (and a dir region) */
static int undo_dir_err(const char *u)
{
	return load("regions = (\n"
		    "  { name = \"a\"; path = \"%1$s/a\"; },\n"
		    "  { name = \"d\"; type = \"devdax\"; path = \"/dev/null\";\n"
		    "    undo_dir = \"%2$s\"; }\n"
		    ");\n",
		    dir, u);
}

static void rpmemd_config_load__devdax_undo_dir(void **state)
{
	char p[PATH_MAX + 64];
	(void)state;
	snprintf(p, sizeof(p), "%s/b/", dir);
	assert_int_equal(undo_dir_err(p), 0);
	p[strlen(p) - 1] = '\0';
	assert_string_equal(cfg.regions[1].undo_dir, p);
	assert_string_equal(cfg.regions[0].undo_dir, "");
	rpmemd_config_free(&cfg);

	snprintf(p, sizeof(p), "%s/nowhere", dir);
	assert_int_equal(undo_dir_err(p), -EINVAL);
	at(4);
	has("regions[1].undo_dir");
	has("No such file or directory (create it");
	snprintf(p, sizeof(p), "%s/plainfile", dir);
	assert_int_equal(undo_dir_err(p), -EINVAL);
	has("is not a directory: the journals need a file system");
	assert_int_equal(undo_dir_err("/dev/null"), -EINVAL);
	has("is not a directory");
	assert_int_equal(undo_dir_err("b"), -EINVAL);
	has("is not an absolute path");
	/* a journal in a dir region could be one of its pool files */
	snprintf(p, sizeof(p), "%s/a/inner", dir);
	assert_int_equal(undo_dir_err(p), -EINVAL);
	has("regions[1].undo_dir");
	has("overlaps the directory of region 'a'");
	assert_int_equal(undo_dir_err(dir), -EINVAL);
	has("overlaps the directory of region 'a'");
	/* only a devdax region takes one */
	assert_int_equal(load("regions = ( { name = \"a\"; path = \"%1$s/a\";\n"
			      "  undo_dir = \"%1$s/b\"; } );\n",
			      dir),
			 -EINVAL);
	has("only a devdax region takes undo_dir");
	/* two devdax regions: a pool name in both would share a journal */
	assert_int_equal(load("regions = (\n"
			      "  { name = \"d\"; type = \"devdax\"; path = \"/dev/null\";\n"
			      "    undo_dir = \"%1$s/c\"; },\n"
			      "  { name = \"e\"; type = \"devdax\"; path = \"/dev/zero\";\n"
			      "    undo_dir = \"%1$s/c/\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	has("is also the undo_dir of region");
}

static void rpmemd_config_load__non_loopback_with_allow_insecure(void **state)
{
	(void)state;
	assert_int_equal(load("listen = [\"0.0.0.0\", \"10.0.0.5\"];\n"
			      "allow_insecure_remote = true;\n"),
			 0);
	assert_int_equal(cfg.nlisten, 2);
	assert_int_equal(cfg.allow_insecure_remote, 1);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("listen = \"127.0.0.2\";\n"), 0);
	assert_string_equal(cfg.listen[0], "127.0.0.2");
	rpmemd_config_free(&cfg);
}

/* --- bad files ----------------------------------------------------------- */

static void rpmemd_config_load__syntax_error_names_file_and_line(
	void **state)
{
	(void)state;
	assert_int_equal(load("port = 7000;\n"
			      "\n"
			      "log = { level = \"info\" \n"
			      "max_sessions = 8;\n"),
			 -EINVAL);
	has(conf);
	has("syntax error");
	/* libconfig names the line where it noticed the error (here EOF) */
	int line = 0;
	assert_int_equal(sscanf(err + strlen(conf), ":%d: ", &line), 1);
	assert_in_range(line, 3, 5);
	assert_int_equal(load("port = 7000;\nport 7000;\n"), -EINVAL);
	at(2);
	assert_int_equal(load("port = ;\n"), -EINVAL);
	at(1);
}

static void rpmemd_config_load__unknown_region_type(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n"
			      "  { name = \"a\";\n"
			      "    type = \"tape\";\n"
			      "    path = \"%s/a\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	at(3);
	has("regions[0].type");
	has("'tape'");
}

static void rpmemd_config_load__devdax_needs_a_character_device(
	void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"d\"; type = \"devdax\";\n"
			      "  path = \"%s/a\"; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("regions[0].path");
	has("is not a character device");
	assert_int_equal(load("regions = ( { name = \"d\"; type = \"devdax\";\n"
			      "  path = \"%s/plainfile\"; } );\n",
			      dir),
			 -EINVAL);
	has("is not a character device");
	assert_int_equal(load("regions = ( { name = \"d\"; type = \"devdax\";\n"
			      "  path = \"/dev/no-such-dax9.9\"; } );\n"),
			 -EINVAL);
	has("/dev/no-such-dax9.9");
	has(strerror(ENOENT));
	/* and a directory region on a device says which type it needs */
	assert_int_equal(load("regions = ( { name = \"d\"; type = \"fsdax\";\n"
			      "  path = \"/dev/null\"; } );\n"),
			 -EINVAL);
	has("is not a directory");
	has("type = \"devdax\"");
}

static void rpmemd_config_load__devdax_device_listed_twice(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n"
			      "  { name = \"d1\"; type = \"devdax\"; path = \"/dev/null\"; },\n"
			      "  { name = \"d2\"; type = \"devdax\"; path = \"/dev/null\"; }\n"
			      ");\n"),
			 -EINVAL);
	at(3);
	has("regions[1].path");
	has("is also region 'd1'");
}

static void rpmemd_config_load__duplicate_region_name(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n"
			      "  { name = \"a\"; path = \"%1$s/a\"; },\n"
			      "  { name = \"a\"; path = \"%1$s/b\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	at(3);
	has("regions[1].name");
	has("'a' is defined twice");
}

static void rpmemd_config_load__invalid_region_name(void **state)
{
	(void)state;
	static const char *const bad[] = { "..", ".hidden", "a/b", "",
					   "a b", "caf\xc3\xa9" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load("\n"
				      "regions = ( { name = \"%s\";\n"
				      "  path = \"%s/a\"; } );\n",
				      bad[i], dir),
				 -EINVAL);
		at(2);
		has("regions[0].name");
		has("not a valid name");
	}
	assert_int_equal(load("regions = ( { path = \"%s/a\"; } );\n", dir),
			 -EINVAL);
	has("regions[0].name: missing");
}

static void rpmemd_config_load__relative_path(void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"a\";\n"
			      "  path = \"var/lib/rpmemd\"; } );\n"),
			 -EINVAL);
	at(2);
	has("regions[0].path");
	has("'var/lib/rpmemd' is not an absolute path");
}

static void rpmemd_config_load__missing_path(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n  { name = \"a\"; }\n);\n"),
			 -EINVAL);
	has(conf);
	has("regions[0].path: missing");
}

static void rpmemd_config_load__path_not_a_directory(void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"a\";\n"
			      "  path = \"%s/nonexistent\"; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("regions[0].path");
	has(strerror(ENOENT));
	assert_int_equal(load("regions = ( { name = \"a\";\n"
			      "  path = \"%s/plainfile\"; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("is not a directory");
}

static void rpmemd_config_load__overlapping_regions(void **state)
{
	(void)state;
	assert_int_equal(load("regions = (\n"
			      "  { name = \"a\"; path = \"%1$s/a\"; },\n"
			      "  { name = \"b\"; path = \"%1$s/a/inner\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	at(3);
	has("regions[1].path");
	has("overlaps region 'a'");
	assert_int_equal(load("regions = (\n"
			      "  { name = \"a\"; path = \"%1$s/a/inner\"; },\n"
			      "  { name = \"b\"; path = \"%1$s/a/\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	has("overlaps region 'a'");
	assert_int_equal(load("regions = (\n"
			      "  { name = \"a\"; path = \"%1$s/a\"; },\n"
			      "  { name = \"b\"; path = \"%1$s/b/../a\"; }\n"
			      ");\n",
			      dir),
			 -EINVAL);
	has("overlaps region 'a'");
}

static void rpmemd_config_load__port_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(load("\nport = 0;\n"), -EINVAL);
	at(2);
	has("port");
	has("out of range");
	assert_int_equal(load("port = 70000;\n"), -EINVAL);
	at(1);
	has("70000");
	assert_int_equal(load("port = -1;\n"), -EINVAL);
	has("port");
	assert_int_equal(load("port = \"7000\";\n"), -EINVAL);
	at(1);
	has("must be an integer");
	assert_int_equal(load("port = 65535;\n"), 0);
	assert_string_equal(cfg.port, "65535");
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__non_loopback_needs_allow_insecure_remote(
	void **state)
{
	(void)state;
	static const char *const bad[] = { "0.0.0.0", "10.0.0.5", "::",
					   "fe80::1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load("port = 7000;\n"
				      "listen = [\"127.0.0.1\", \"%s\"];\n",
				      bad[i]),
				 -EINVAL);
		at(2);
		has("listen");
		has(bad[i]);
		has("allow_insecure_remote");
	}
	assert_int_equal(load("listen = [\"10.0.0.5\"];\n"
			      "allow_insecure_remote = false;\n"),
			 -EINVAL);
	has("not a loopback address");
}

static void rpmemd_config_load__bad_listen_values(void **state)
{
	(void)state;
	assert_int_equal(load("listen = [\"example.com\"];\n"), -EINVAL);
	at(1);
	has("listen[0]");
	has("'example.com' is not a numeric");
	assert_int_equal(load("listen = [\"127.0.0.1\", \"127.0.0.1\"];\n"),
			 -EINVAL);
	has("listen[1]");
	has("listed twice");
	assert_int_equal(load("listen = [];\n"), -EINVAL);
	has("at least one address");
	assert_int_equal(load("listen = 5;\n"), -EINVAL);
	has("listen");
	char many[2048] = "listen = [";
	for (int i = 0; i <= RPMEMD_MAX_LISTEN; i++) {
		char a[32];
		snprintf(a, sizeof(a), "%s\"127.0.0.%d\"", i ? ", " : "",
			 i + 1);
		strcat(many, a);
	}
	strcat(many, "];\n");
	assert_int_equal(load("%s", many), -EINVAL);
	has("at most");
}

static void rpmemd_config_load__bad_scalar_settings(void **state)
{
	(void)state;
	assert_int_equal(load("max_sessions = 0;\n"), -EINVAL);
	at(1);
	has("max_sessions");
	assert_int_equal(load("max_sessions = 4097;\n"), -EINVAL);
	has("max_sessions");
	assert_int_equal(load("\n\nlog = { level = \"loud\"; };\n"), -EINVAL);
	at(3);
	has("log.level");
	has("'loud'");
	assert_int_equal(load("log = { target = \"file\"; };\n"), -EINVAL);
	has("log.target");
	assert_int_equal(load("log = \"info\";\n"), -EINVAL);
	has("log");
	assert_int_equal(load("allow_insecure_remote = 1;\n"), -EINVAL);
	has("allow_insecure_remote");
	has("true or false");
	assert_int_equal(load("auth = { require_auth = true; };\n"), -EINVAL);
	has("auth.require_auth");
	has("clients authenticate through TLS");
}

/* --- access ------------------------------------------------------------- */

static void rpmemd_config_load__append_and_region_check(void **state)
{
	(void)state;
	assert_int_equal(load("access = ( { identity = \"n\";"
			      " regions = [ \"r1\" ]; rights = [ \"append\" ]; } );\n"),
			 0);
	assert_int_equal(cfg.naccess, 1);
	assert_int_equal(cfg.access[0].rights,
			 RPMEMD_RIGHT_APPEND | RPMEMD_RIGHT_READ);
	assert_int_equal(cfg.region_check_warn, 0);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("region_check = \"warn\";\n"), 0);
	assert_int_equal(cfg.region_check_warn, 1);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("region_check = \"strict\";\n"), 0);
	assert_int_equal(cfg.region_check_warn, 0);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("\nregion_check = \"off\";\n"), -EINVAL);
	at(2);
	has("region_check: 'off' is not one of strict, warn");
	assert_int_equal(load("region_check = 1;\n"), -EINVAL);
	has("region_check: must be a string");
}

static void rpmemd_config_load__access_rules_become_entries(void **state)
{
	(void)state;
	int ret = load("access = (\n"
		       "  { identity = \"backup1\"; regions = [ \"r1\", \"r2\" ];\n"
		       "    rights = [ \"read\", \"write\" ]; },\n"
		       "  { identity = \"monitor\"; regions = [ \"*\" ];"
		       " rights = [ \"read\" ]; },\n"
		       "  { identity = \"ops\"; rights = [ \"admin\" ]; },\n"
		       "  { identity = \"CN with spaces\"; regions = ( \"r1\" );"
		       " rights = ( \"write\", \"admin\" ); }\n"
		       ");\n");
	assert_int_equal(ret, 0);
	assert_int_equal(cfg.has_access, 1);
	assert_int_equal(cfg.naccess, 5);
	assert_string_equal(cfg.access[0].identity, "backup1");
	assert_string_equal(cfg.access[0].region, "r1");
	assert_string_equal(cfg.access[1].region, "r2");
	assert_int_equal(cfg.access[1].rights,
			 RPMEMD_RIGHT_READ | RPMEMD_RIGHT_WRITE);
	assert_int_equal(cfg.access[1].line, 2);
	assert_string_equal(cfg.access[2].region, "*");
	assert_int_equal(cfg.access[2].rights, RPMEMD_RIGHT_READ);
	assert_int_equal(cfg.access[2].line, 4);
	/* admin alone: one daemon-wide entry */
	assert_string_equal(cfg.access[3].identity, "ops");
	assert_string_equal(cfg.access[3].region, "");
	assert_int_equal(cfg.access[3].rights, RPMEMD_RIGHT_ADMIN);
	/* write brings read */
	assert_int_equal(cfg.access[4].rights, RPMEMD_RIGHT_READ |
						       RPMEMD_RIGHT_WRITE |
						       RPMEMD_RIGHT_ADMIN);
	rpmemd_config_free(&cfg);
	assert_null(cfg.access);
	assert_int_equal(cfg.naccess, 0);
}

static void rpmemd_config_load__empty_access_list_is_present(void **state)
{
	(void)state;
	assert_int_equal(load("access = ();\n"), 0);
	assert_int_equal(cfg.has_access, 1);
	assert_int_equal(cfg.naccess, 0);
	rpmemd_config_free(&cfg);
	assert_int_equal(load("\n"), 0);
	assert_int_equal(cfg.has_access, 0);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_load__bad_access_rules(void **state)
{
	(void)state;
	assert_int_equal(load("access = { identity = \"a\"; };\n"), -EINVAL);
	at(1);
	has("access: must be a list");
	assert_int_equal(load("access = ( \"a\" );\n"), -EINVAL);
	has("access[0].: must be a group");
	assert_int_equal(load("access = (\n { identity = \"a\";\n"
			      "   rights = [ \"read\", \"delete\" ];"
			      " regions = [ \"r1\" ]; } );\n"),
			 -EINVAL);
	at(3);
	has("access[0].rights: 'delete' is not one of read, append, write, admin");
	assert_int_equal(load("access = ( { rights = [ \"read\" ];"
			      " regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("access[0].identity: missing");
	assert_int_equal(load("access = ( { identity = \"\"; rights = [ \"read\" ];"
			      " regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("access[0].identity: '' is not an identity");
	assert_int_equal(load("access = ( { identity = \"*\"; rights = [ \"read\" ];"
			      " regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("no wildcard");
	assert_int_equal(load("access = ( { identity = \"a\\tb\";"
			      " rights = [ \"read\" ]; regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("is not an identity");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("access[0].rights: missing");
	assert_int_equal(load("access = ( { identity = \"a\"; rights = [];"
			      " regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("needs at least one of read, append, write, admin");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = \"read\"; regions = [ \"*\" ]; } );\n"),
			 -EINVAL);
	has("access[0].rights: must be a list of strings");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = [ \"read\" ]; } );\n"),
			 -EINVAL);
	has("access[0].regions: missing: read and write need");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = [ \"write\" ]; regions = []; } );\n"),
			 -EINVAL);
	has("access[0].regions: empty");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = [ \"read\" ]; regions = [ \".x\" ]; } );\n"),
			 -EINVAL);
	has("'.x' is not a region name");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = [ \"admin\" ]; regions = [ \"r1\" ]; } );\n"),
			 -EINVAL);
	has("admin is daemon-wide and takes no regions");
	assert_int_equal(load("access = ( { identity = \"a\";"
			      " rights = [ \"read\" ]; regions = [ \"*\" ];"
			      " region = \"r1\"; } );\n"),
			 -EINVAL);
	has("access[0].region: unknown setting");
}

static void rpmemd_config_load__unknown_settings_are_errors(void **state)
{
	(void)state;
	assert_int_equal(load("port = 7000;\nprot = 7000;\n"), -EINVAL);
	at(2);
	has("prot: unknown setting");
	assert_int_equal(load("log = {\n  colour = true;\n};\n"), -EINVAL);
	at(2);
	has("log.colour: unknown setting");
	assert_int_equal(load("regions = ( { name = \"a\"; path = \"%s/a\";\n"
			      "  size = 5; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("regions[0].size: unknown setting");
	assert_int_equal(load("auth = { password = \"x\"; };\n"), -EINVAL);
	has("auth.password: unknown setting");
}

static void rpmemd_config_load__regions_must_be_a_list_of_groups(
	void **state)
{
	(void)state;
	assert_int_equal(load("regions = { name = \"a\"; };\n"), -EINVAL);
	at(1);
	has("regions");
	assert_int_equal(load("regions = ( \"a\" );\n"), -EINVAL);
	has("regions[0]");
}

static void rpmemd_config_load__fsdax_needs_a_dax_mount(void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"p\"; type = \"fsdax\";\n"
			      "  path = \"%s/nodax/r\"; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("regions[0].path");
	has("not on a file system mounted with -o dax");
	char mnt[PATH_MAX + 16];
	snprintf(mnt, sizeof(mnt), "%s/nodax", dir);
	has(mnt);
	/* dax=inode: a file is DAX only if flagged, so not a DAX mount */
	assert_int_equal(load("regions = ( { name = \"p\"; type = \"fsdax\";\n"
			      "  path = \"%s/inode/r\"; } );\n",
			      dir),
			 -EINVAL);
	has("dax=inode");
}

static void rpmemd_config_load__direct_pmem_only_on_pmem(void **state)
{
	(void)state;
	assert_int_equal(load("regions = ( { name = \"a\"; path = \"%s/a\";\n"
			      "  direct_pmem = true; } );\n",
			      dir),
			 -EINVAL);
	at(2);
	has("regions[0].direct_pmem");
	has("fsdax");
}

static void rpmemd_config_load__missing_file_is_enoent(void **state)
{
	(void)state;
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/no-such.conf", dir);
	memset(err, 0, sizeof(err));
	assert_int_equal(rpmemd_config_load(p, &cfg, err, sizeof(err)),
			 -ENOENT);
	has(p);
	has(strerror(ENOENT));
}

static void rpmemd_config_load__out_untouched_on_failure(void **state)
{
	(void)state;
	write_file(conf, "port = 0;\n");
	struct rpmemd_config c, before;
	memset(&c, 0x5a, sizeof(c));
	before = c;
	assert_int_equal(rpmemd_config_load_mounts(conf, mounts, &c, err,
						   sizeof(err)),
			 -EINVAL);
	assert_memory_equal(&c, &before, sizeof(c));
	/* and a NULL or empty error buffer is fine */
	assert_int_equal(rpmemd_config_load_mounts(conf, mounts, &c, NULL, 0),
			 -EINVAL);
	char tiny[4] = "zzz";
	assert_int_equal(rpmemd_config_load_mounts(conf, mounts, &c, tiny, 0),
			 -EINVAL);
	assert_string_equal(tiny, "zzz");
}

static void rpmemd_config_free__null_and_twice(void **state)
{
	(void)state;
	rpmemd_config_free(NULL);
	assert_int_equal(load("regions = ( { name = \"a\";"
			      " path = \"%s/a\"; } );\n",
			      dir),
			 0);
	rpmemd_config_free(&cfg);
	rpmemd_config_free(&cfg);
	assert_null(cfg.regions);
}

/* --- mount table and region types ---------------------------------------- */

static void rpmemd_is_dax_mount_in__longest_match_and_options(void **state)
{
	(void)state;
	char m[PATH_MAX + 32];
	snprintf(m, sizeof(m), "%s/mounts2", dir);
	write_file(m, "rootfs / rootfs rw 0 0\n"
		      "/dev/sda1 / ext4 rw 0 0\n"
		      "/dev/pmem0 /mnt/pmem ext4 rw,dax 0 0\n"
		      "/dev/pmem1 /mnt/pmem0 xfs rw,dax=inode 0 0\n"
		      "/dev/pmem2 /mnt/with\\040space ext4 rw,dax=always 0 0\n"
		      "/dev/pmem3 /mnt/over ext4 rw,dax 0 0\n"
		      "/dev/sdb1 /mnt/over ext4 rw 0 0\n"
		      "/dev/pmem4 /mnt/pmem/sub ext4 rw,nodax 0 0\n"
		      "garbage\n");
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/pmem/x"), 1);
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/pmem"), 1);
	/* dax=inode makes only flagged files DAX: not a DAX mount */
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/pmem0/x"), 0);
	/* a component boundary: /mnt/pmemx is not below /mnt/pmem */
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/pmemx"), 0);
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/with space/db"), 1);
	/* the later of two mounts on one directory is the visible one */
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/over/x"), 0);
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/mnt/pmem/sub/x"), 0);
	assert_int_equal(rpmemd_is_dax_mount_in(m, "/home/x"), 0);
}

static void rpmemd_is_dax_mount_in__unreadable_table_is_errno(void **state)
{
	(void)state;
	char p[PATH_MAX + 32];
	snprintf(p, sizeof(p), "%s/no-mounts", dir);
	assert_int_equal(rpmemd_is_dax_mount_in(p, "/"), -ENOENT);
	/* and a region on fsdax then says why */
	write_file(conf, "regions = ( { name = \"p\"; type = \"fsdax\";\n"
			 "  path = \"/\"; } );\n");
	assert_int_equal(rpmemd_config_load_mounts(conf, p, &cfg, err,
						   sizeof(err)),
			 -EINVAL);
	has("cannot read");
	has(p);
}

/* --- regions_auto ----------------------------------------------------------- */

/* auto_region -- a discovered region as rpmemd_pmem_auto_regions gives it */
static struct rpmemd_region_cfg auto_region(const char *name, uint8_t type,
					    const char *path)
{
	struct rpmemd_region_cfg r;
	memset(&r, 0, sizeof(r));
	snprintf(r.name, sizeof(r.name), "%s", name);
	r.type = type;
	snprintf(r.path, sizeof(r.path), "%s", path);
	return r;
}

static void rpmemd_config_add_regions__explicit_regions_win(void **state)
{
	(void)state;
	char daxdir[PATH_MAX + 8], other[PATH_MAX + 8];
	snprintf(daxdir, sizeof(daxdir), "%s/dax", dir);
	snprintf(other, sizeof(other), "%s/b", dir);
	/* explicit: devdax /dev/null, a dir region inside the dax mount */
	assert_int_equal(load("regions = (\n"
			      "  { name = \"d\"; type = \"devdax\"; path = \"/dev/null\"; },\n"
			      "  { name = \"pm\"; type = \"fsdax\"; path = \"%1$s/dax/r\"; },\n"
			      "  { name = \"taken\"; path = \"%1$s/a\"; }\n"
			      ");\n",
			      dir),
			 0);
	struct rpmemd_region_cfg found[] = {
		/* the same device under another name: left out */
		auto_region("dax1.0", RPMEM_REGION_DEVDAX, "/dev/null"),
		/* a mount holding an explicit region: left out */
		auto_region("pmem0", RPMEM_REGION_FSDAX, daxdir),
		/* a configured name: left out */
		auto_region("taken", RPMEM_REGION_DEVDAX, "/dev/zero"),
		/* new: added */
		auto_region("dax2.0", RPMEM_REGION_DEVDAX, "/dev/zero"),
		auto_region("pmem1", RPMEM_REGION_FSDAX, other),
	};
	assert_int_equal(rpmemd_config_add_regions(&cfg, found, 5), 2);
	assert_int_equal(cfg.nregions, 5);
	assert_string_equal(cfg.regions[0].name, "d");
	assert_int_equal(cfg.regions[0].is_auto, 0);
	assert_string_equal(cfg.regions[3].name, "dax2.0");
	assert_string_equal(cfg.regions[3].path, "/dev/zero");
	assert_int_equal(cfg.regions[3].type, RPMEM_REGION_DEVDAX);
	assert_int_equal(cfg.regions[3].is_auto, 1);
	assert_string_equal(cfg.regions[4].name, "pmem1");
	assert_string_equal(cfg.regions[4].path, other);
	assert_int_equal(cfg.regions[4].is_auto, 1);
	/* nothing found, nothing changes */
	assert_int_equal(rpmemd_config_add_regions(&cfg, NULL, 0), 0);
	assert_int_equal(cfg.nregions, 5);
	rpmemd_config_free(&cfg);
}

static void rpmemd_config_add_regions__to_a_file_without_regions(
	void **state)
{
	(void)state;
	assert_int_equal(load("regions_auto = true;\n"), 0);
	assert_int_equal(cfg.regions_auto, 1);
	assert_int_equal(cfg.nregions, 0);
	struct rpmemd_region_cfg found[] = {
		auto_region("dax1.0", RPMEM_REGION_DEVDAX, "/dev/null"),
		/* discovery never gives one device twice, but if it did */
		auto_region("dax1.1", RPMEM_REGION_DEVDAX, "/dev/null"),
	};
	assert_int_equal(rpmemd_config_add_regions(&cfg, found, 2), 1);
	assert_int_equal(cfg.nregions, 1);
	assert_string_equal(cfg.regions[0].name, "dax1.0");
	rpmemd_config_free(&cfg);
}

static void rpmemd_region_type_parse__known_names(void **state)
{
	(void)state;
	assert_int_equal(rpmemd_region_type_parse("dir"), RPMEM_REGION_DIR);
	assert_int_equal(rpmemd_region_type_parse("fsdax"),
			 RPMEM_REGION_FSDAX);
	assert_int_equal(rpmemd_region_type_parse("devdax"),
			 RPMEM_REGION_DEVDAX);
	assert_int_equal(rpmemd_region_type_parse("DIR"), -1);
	assert_int_equal(rpmemd_region_type_parse(""), -1);
	assert_int_equal(rpmemd_region_type_parse("dir "), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpmemd_config_load__empty_file_gives_defaults),
		cmocka_unit_test(rpmemd_config_load__minimal_region),
		cmocka_unit_test(rpmemd_config_load__limits_group),
		cmocka_unit_test(
			rpmemd_config_load__limits_out_of_range_or_unknown),
		cmocka_unit_test(
			rpmemd_config_load__rdma_staging_max_size_or_bytes),
		cmocka_unit_test(rpmemd_config_load__rdma_staging_max_invalid),
		cmocka_unit_test(rpmemd_config_load__full_file),
		cmocka_unit_test(rpmemd_config_load__several_regions),
		cmocka_unit_test(
			rpmemd_config_load__non_loopback_with_allow_insecure),
		cmocka_unit_test(
			rpmemd_config_load__syntax_error_names_file_and_line),
		cmocka_unit_test(rpmemd_config_load__unknown_region_type),
		cmocka_unit_test(rpmemd_config_load__devdax_region),
		cmocka_unit_test(rpmemd_config_load__devdax_undo_dir),
		cmocka_unit_test(
			rpmemd_config_load__devdax_needs_a_character_device),
		cmocka_unit_test(
			rpmemd_config_load__devdax_device_listed_twice),
		cmocka_unit_test(rpmemd_config_load__duplicate_region_name),
		cmocka_unit_test(rpmemd_config_load__invalid_region_name),
		cmocka_unit_test(rpmemd_config_load__relative_path),
		cmocka_unit_test(rpmemd_config_load__missing_path),
		cmocka_unit_test(rpmemd_config_load__path_not_a_directory),
		cmocka_unit_test(rpmemd_config_load__overlapping_regions),
		cmocka_unit_test(rpmemd_config_load__port_out_of_range),
		cmocka_unit_test(
			rpmemd_config_load__non_loopback_needs_allow_insecure_remote),
		cmocka_unit_test(rpmemd_config_load__bad_listen_values),
		cmocka_unit_test(rpmemd_config_load__bad_scalar_settings),
		cmocka_unit_test(
			rpmemd_config_load__access_rules_become_entries),
		cmocka_unit_test(rpmemd_config_load__append_and_region_check),
		cmocka_unit_test(
			rpmemd_config_load__empty_access_list_is_present),
		cmocka_unit_test(rpmemd_config_load__bad_access_rules),
		cmocka_unit_test(
			rpmemd_config_load__unknown_settings_are_errors),
		cmocka_unit_test(
			rpmemd_config_load__regions_must_be_a_list_of_groups),
		cmocka_unit_test(rpmemd_config_load__fsdax_needs_a_dax_mount),
		cmocka_unit_test(rpmemd_config_load__direct_pmem_only_on_pmem),
		cmocka_unit_test(rpmemd_config_load__missing_file_is_enoent),
		cmocka_unit_test(
			rpmemd_config_load__out_untouched_on_failure),
		cmocka_unit_test(rpmemd_config_free__null_and_twice),
		cmocka_unit_test(
			rpmemd_is_dax_mount_in__longest_match_and_options),
		cmocka_unit_test(
			rpmemd_is_dax_mount_in__unreadable_table_is_errno),
		cmocka_unit_test(
			rpmemd_config_add_regions__explicit_regions_win),
		cmocka_unit_test(
			rpmemd_config_add_regions__to_a_file_without_regions),
		cmocka_unit_test(rpmemd_region_type_parse__known_names),
	};
	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}

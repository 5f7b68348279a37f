/*
 * providers/aws: drift — whether an instance still runs the AMI and the
 * instance type its group's launch template launches now (the instance's
 * imageId from DescribeInstances and its type from the listing, against
 * the template's, ResolveAlias'd). Reading the template and its cache are
 * aws_template.c's; the instances' imageIds and types come with the
 * listing (aws.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/aws_internal.h"

/* How far EC2's clock and ours may differ: an instance launched this
 * close to the template's read may have come from a newer template. */
#define CLOCK_SKEW_S 5

/* What a group's launch template launches now, as read for one listing. */
struct lt_now {
	const char *id, *name, *version;
	char image[64];    /* its AMI id; "" unknown or not an AMI id (an SSM alias) */
	char type[64];     /* its instance type; "" unknown or none named */
	int64_t read_wall; /* when the cloud said it (unix seconds) */
};

bool aws_ami_id(const char *s)
{
	if (!s || strncmp(s, "ami-", 4) || !s[4] || strlen(s) > 4 + 32)
		return false;
	for (s += 4; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* Reads the template into t (again when 'fresh'); its image "" when
 * unknown or not an AMI id (an SSM alias the cloud did not resolve). */
static void read_template(struct provider *p, struct lt_now *t, bool fresh)
{
	struct aws_lt_cache e;

	t->image[0] = t->type[0] = '\0';
	if (aws_lt_read(p, t->id, t->name, t->version, fresh, &e) < 0)
		return;
	if (aws_ami_id(e.image))
		snprintf(t->image, sizeof(t->image), "%s", e.image);
	snprintf(t->type, sizeof(t->type), "%s", e.type);
	t->read_wall = e.read_wall;
}

/* Instance i's type, "" unknown or not judged. */
static const char *type_of(const struct aws_running *run, size_t i)
{
	return run->types ? run->types[i] : "";
}

/* Does instance i run another image or type than the template says
 * (only where both sides are known)? */
static bool image_differs(const struct lt_now *t, const struct aws_running *run, size_t i)
{
	return t->image[0] && aws_ami_id(run->images[i]) && strcmp(run->images[i], t->image);
}

static bool type_differs(const struct lt_now *t, const struct aws_running *run, size_t i)
{
	return t->type[0] && type_of(run, i)[0] && strcmp(type_of(run, i), t->type);
}

/* Is an instance running something else launched after the template was
 * read (within the clocks' skew)? Then the template may have changed since. */
static bool newer_than_read(const struct lt_now *t, const struct aws_running *run, size_t i,
			    int64_t launched_wall)
{
	return (image_differs(t, run, i) || type_differs(t, run, i)) && launched_wall > 0 &&
	       launched_wall + CLOCK_SKEW_S >= t->read_wall;
}

void aws_outdated_judge(struct provider *p, const char *lt_id, const char *lt_name,
			const char *version, struct provider_instance *in, const struct aws_running *run,
			size_t n)
{
	struct lt_now t = {lt_id, lt_name, version && *version ? version : "$Default", "", "", 0};
	const char *lt;
	size_t i;

	for (i = 0; i < n; i++)
		in[i].outdated[0] = '\0';
	if ((!lt_id || !*lt_id) && (!lt_name || !*lt_name))
		return;
	for (i = 0; i < n && !aws_ami_id(run->images[i]) && !type_of(run, i)[0]; i++)
		;
	if (i == n)
		return; /* neither an image nor a type known: nothing to ask */
	read_template(p, &t, false);
	for (i = 0; (t.image[0] || t.type[0]) && i < n; i++)
		if (newer_than_read(&t, run, i, in[i].launched_wall)) {
			read_template(p, &t, true);
			break;
		}
	lt = lt_name && *lt_name ? lt_name : lt_id;
	for (i = 0; i < n; i++) {
		char why[512] = "";
		size_t k = 0;

		if (type_differs(&t, run, i))
			k = (size_t)snprintf(why, sizeof(why),
					     "instance type %.40s is not launch template %.48s version %.20s's %.40s",
					     type_of(run, i), lt, t.version, t.type);
		if (image_differs(&t, run, i))
			snprintf(why + k, sizeof(why) - k,
				 "%simage %.40s is not launch template %.48s version %.20s's %.40s", k ? "; " : "",
				 run->images[i], lt, t.version, t.image);
		/* the outdated text is bounded: a long pair is cut */
		snprintf(in[i].outdated, sizeof(in[i].outdated), "%.*s", (int)sizeof(in[i].outdated) - 1, why);
	}
}

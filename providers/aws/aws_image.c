/*
 * providers/aws: image drift — whether an instance still runs the AMI its
 * group's launch template launches now (the instance's imageId from
 * DescribeInstances against the template's, ResolveAlias'd). Reading the
 * template and its cache are aws_template.c's; the instances' imageIds
 * come with the listing (aws.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "providers/aws/aws_internal.h"

/* How far EC2's clock and ours may differ: an instance launched this
 * close to the template's read may have come from a newer template. */
#define CLOCK_SKEW_S 5

/* What a group's launch template launches now, as read for one listing. */
struct lt_image {
	const char *id, *name, *version;
	char image[64];    /* its AMI id; "" unknown or not an AMI id (an SSM alias) */
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

/* Reads the template's image into t (again when 'fresh'); "" when unknown
 * or not an AMI id (an SSM alias the cloud did not resolve). */
static void read_image(struct provider *p, struct lt_image *t, bool fresh)
{
	struct aws_lt_cache e;

	t->image[0] = '\0';
	if (aws_lt_read(p, t->id, t->name, t->version, fresh, &e) < 0)
		return;
	if (aws_ami_id(e.image))
		snprintf(t->image, sizeof(t->image), "%s", e.image);
	t->read_wall = e.read_wall;
}

/* Is an instance on another AMI launched after the template was read
 * (within the clocks' skew)? Then the template may have changed since. */
static bool newer_than_read(const struct lt_image *t, const char *image, int64_t launched_wall)
{
	return aws_ami_id(image) && strcmp(image, t->image) && launched_wall > 0 &&
	       launched_wall + CLOCK_SKEW_S >= t->read_wall;
}

void aws_images_judge(struct provider *p, const char *lt_id, const char *lt_name,
		      const char *version, struct provider_instance *in, const char (*images)[64],
		      size_t n)
{
	struct lt_image t = {lt_id, lt_name, version && *version ? version : "$Default", "", 0};
	size_t i;

	for (i = 0; i < n; i++)
		in[i].outdated[0] = '\0';
	if ((!lt_id || !*lt_id) && (!lt_name || !*lt_name))
		return;
	for (i = 0; i < n && !aws_ami_id(images[i]); i++)
		;
	if (i == n)
		return; /* EC2 said no instance's image: nothing to ask */
	read_image(p, &t, false);
	for (i = 0; t.image[0] && i < n; i++)
		if (newer_than_read(&t, images[i], in[i].launched_wall)) {
			read_image(p, &t, true);
			break;
		}
	if (!t.image[0])
		return;
	for (i = 0; i < n; i++)
		if (aws_ami_id(images[i]) && strcmp(images[i], t.image))
			snprintf(in[i].outdated, sizeof(in[i].outdated),
				 "image %.40s is not launch template %.48s version %.20s's %.40s", images[i],
				 lt_name && *lt_name ? lt_name : lt_id, t.version, t.image);
}

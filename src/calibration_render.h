/* calibration_render.h: a calibration report (the JSON object of
 * doc/design.md, section 15, as ops_calibration.c builds it) written out as
 * JSON, as readable text, or as one self-contained HTML page (inline CSS
 * and SVG: a reliability diagram and a confidence histogram per question;
 * no script, font or image from elsewhere).  Pure: writes to the FILE it
 * is given and nowhere else. */
#ifndef EVALGATE_CALIBRATION_RENDER_H
#define EVALGATE_CALIBRATION_RENDER_H

#include <stdio.h>

#include <json-c/json.h>

enum cal_format {
	CAL_FORMAT_TEXT,
	CAL_FORMAT_JSON,
	CAL_FORMAT_HTML,
	CAL_FORMAT__MAX
};

/* The format named "text", "json" or "html"; CAL_FORMAT__MAX for any
 * other name. */
enum cal_format	 calibration_format(const char *name);
/* Its media type, charset included (HTTP Content-Type). */
const char	*calibration_media_type(enum cal_format f);
/* Writes report (borrowed) to f.  0, or -1 if writing failed. */
int		 calibration_render(FILE *f, json_object *report,
		    enum cal_format fmt);
/* The HTML page's body without its frame or definitions: the summary,
 * then per question its figures, the two charts and its backends; the
 * console's calibration page shows it (handler_console*.c).  Its
 * classes' rules are calibration_chart_style. */
void		 calibration_render_body(FILE *f, json_object *report);
extern const char calibration_chart_style[];

#endif

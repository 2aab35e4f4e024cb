/* The control socket's target for a tandem-server (control_server.c). */
#ifndef TANDEM_CONTROL_SERVER_H
#define TANDEM_CONTROL_SERVER_H

#include "control_ops.h"
#include "server.h"

/* The device's SM count, from its attributes. */
int tdm_control_device_sms(const tdm_server *srv);
/* Fills t to answer for srv, reservations going to `reservations`. */
void tdm_control_server_target(tdm_server *srv, tdm_reservations *reservations, tdm_control_target *t);

#endif

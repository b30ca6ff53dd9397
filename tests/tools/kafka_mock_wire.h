/* kafka_mock_wire.h: sf-kafka-mock's look at its mock brokers' sockets (kafka_mock_wire.c says
 * what it watches, what it rewrites and what it records). */
#ifndef SF_KAFKA_MOCK_WIRE_H
#define SF_KAFKA_MOCK_WIRE_H

/* From now on, the sockets accept() returns are the mock's: their frames are watched, and with
 * record_path (not NULL) each event goes to that file, made anew. 0, or -1 with errno when the
 * file cannot be made. Call it before the mock cluster starts. */
int wire_start(const char *record_path);

#endif

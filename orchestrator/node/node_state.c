/* See node_state.h. */
#include "node_state.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

int tdm_node_state_save(const char *path, const tdm_node_servers *s, const char *server_host)
{
    json_object *root = json_object_new_object(), *list = json_object_new_array();
    char tmp[4200], tcp[160];
    int rc = 0;

    for (int i = 0; i < s->n; i++) {
        const tdm_node_server *v = &s->list[i];
        json_object *o = json_object_new_object();
        snprintf(tcp, sizeof(tcp), "%s:%d", server_host, v->port);
        json_object_object_add(o, "id", json_object_new_string(v->id));
        json_object_object_add(o, "pid", json_object_new_int(v->pid));
        json_object_object_add(o, "role", json_object_new_string(v->is_standby ? "standby" : "active"));
        json_object_object_add(o, "tcp", json_object_new_string(tcp));
        json_object_object_add(o, "shm", json_object_new_string(v->shm));
        json_object_object_add(o, "control", json_object_new_string(v->control));
        json_object_array_add(list, o);
    }
    json_object_object_add(root, "servers", list);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (json_object_to_file_ext(tmp, root, JSON_C_TO_STRING_PRETTY) != 0 || rename(tmp, path) != 0)
        rc = errno ? -errno : -EIO;
    json_object_put(root);
    return rc;
}

int tdm_node_state_load(const char *path, tdm_node_servers *s, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    json_object *root, *list;

    for (int i = 0; i < s->n; i++)
        s->list[i].pid = 0;
    if (!f)
        return -ENOENT;
    fclose(f);
    root = json_object_from_file(path);
    if (!root || !json_object_object_get_ex(root, "servers", &list) || !json_object_is_type(list, json_type_array)) {
        snprintf(why, whylen, "%s: not a state file (%s)", path, json_util_get_last_err() ? json_util_get_last_err()
                                                                                          : "no \"servers\" list");
        json_object_put(root);
        return -EINVAL;
    }
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *o = json_object_array_get_idx(list, i), *id, *pid;
        if (!json_object_object_get_ex(o, "id", &id) || !json_object_object_get_ex(o, "pid", &pid) ||
            !json_object_is_type(pid, json_type_int))
            continue;
        for (int k = 0; k < s->n; k++)
            if (strcmp(s->list[k].id, json_object_get_string(id)) == 0 && json_object_get_int(pid) > 0)
                s->list[k].pid = json_object_get_int(pid);
    }
    json_object_put(root);
    return 0;
}

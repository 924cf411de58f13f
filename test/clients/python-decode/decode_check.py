"""Lists and watches the workload and core resources of one namespace with the official Python
client's typed APIs, so a test can check that whatever Capstan stored deserializes into the
client's model classes (which raise on values of the wrong type and on missing required fields).

stdout: one JSON line per resource, in a fixed order:

    {"resource": "deployments", "encoding": "json", "listed": N, "watched": N, "error": ""}

listed is the number of items of the typed list call (list_namespaced_deployment, ...); watched the
number of ADDED events of kubernetes.watch.Watch from resourceVersion "0" (the server replays the
current objects as ADDED), read until it has as many as were listed. error is "" only when every
object deserialized, the watch sent no ERROR event and no line it could not parse, and the watched
names are the listed names; otherwise it says what went wrong. Exit status 0 once every line is
written, whatever the errors; 2 on bad arguments or an unusable kubeconfig.
"""
import argparse
import json
import sys

from kubernetes import client, config, watch


def resources(apps, core, batch):
    """(resource, typed namespaced list function) in the order of the Go program's lines."""
    return [
        ("deployments", apps.list_namespaced_deployment),
        ("replicasets", apps.list_namespaced_replica_set),
        ("statefulsets", apps.list_namespaced_stateful_set),
        ("daemonsets", apps.list_namespaced_daemon_set),
        ("pods", core.list_namespaced_pod),
        ("services", core.list_namespaced_service),
        ("jobs", batch.list_namespaced_job),
        ("cronjobs", batch.list_namespaced_cron_job),
        ("configmaps", core.list_namespaced_config_map),
        ("secrets", core.list_namespaced_secret),
    ]


def check(name, list_fn, namespace, watch_timeout):
    """Lists, then watches from "0"; returns the result line as a dict."""
    result = {"resource": name, "encoding": "json", "listed": 0, "watched": 0, "error": ""}
    try:
        listed_names = {item.metadata.name for item in list_fn(namespace).items}
    except Exception as e:  # deserialization raises ValueError, TypeError, ApiException, ...
        result["error"] = "list: %s: %s" % (type(e).__name__, e)
        return result
    result["listed"] = len(listed_names)
    watched_names = set()
    w = watch.Watch()
    try:
        if listed_names:
            for event in w.stream(list_fn, namespace, resource_version="0", timeout_seconds=watch_timeout):
                if not isinstance(event, dict):
                    result["error"] = "watch: a line that is not a JSON event"
                    return result
                if event["type"] != "ADDED":
                    result["error"] = "watch: unexpected %s event before the replay of existing objects ended" % event["type"]
                    return result
                watched_names.add(event["object"].metadata.name)
                result["watched"] += 1
                if result["watched"] >= result["listed"]:
                    break
    except Exception as e:  # an ERROR event is raised as ApiException; deserialization errors as ValueError/TypeError
        result["error"] = "watch: %s: %s" % (type(e).__name__, e)
        return result
    finally:
        w.stop()
    if result["watched"] < result["listed"]:
        result["error"] = "watch ended after %d of %d ADDED events" % (result["watched"], result["listed"])
    elif watched_names != listed_names:
        result["error"] = "watch did not replay listed objects: " + ", ".join(sorted(listed_names - watched_names))
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--watch-timeout", type=int, default=10, help="seconds; longest wait for one watch's replay")
    args = parser.parse_args()
    try:
        api_client = config.new_client_from_config(config_file=args.kubeconfig)
    except Exception as e:
        print("kubeconfig: %s" % e, file=sys.stderr)
        sys.exit(2)
    apps, core, batch = client.AppsV1Api(api_client), client.CoreV1Api(api_client), client.BatchV1Api(api_client)
    for name, list_fn in resources(apps, core, batch):
        print(json.dumps(check(name, list_fn, args.namespace, args.watch_timeout)), flush=True)


if __name__ == "__main__":
    main()

// Command metrics-fixture is a small extension API server for Capstan's tests: it serves
// metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics from a fixture file over HTTPS, with discovery
// (aggregated and legacy), and authenticates callers as an aggregated API server does: a client
// certificate verified against the front-proxy CA and the user in X-Remote-User. Standard library only.
//
//	metrics-fixture -tls-cert-file F -tls-private-key-file F -requestheader-client-ca-file F -fixtures F -port-file F
package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

type usage struct {
	CPU    string `json:"cpu"`
	Memory string `json:"memory"`
}

type fixtures struct {
	Nodes []struct {
		Name string `json:"name"`
		usage
	} `json:"nodes"`
	Pods []struct {
		Namespace  string `json:"namespace"`
		Name       string `json:"name"`
		Containers []struct {
			Name string `json:"name"`
			usage
		} `json:"containers"`
	} `json:"pods"`
}

const group, version = "metrics.k8s.io", "v1beta1"

var gv = group + "/" + version

func writeJSON(w http.ResponseWriter, code int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func status(w http.ResponseWriter, code int, reason, message string) {
	writeJSON(w, code, "application/json", map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure", "message": message, "reason": reason, "code": code})
}

func resourceList() map[string]any {
	return map[string]any{
		"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
		"resources": []map[string]any{
			{"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": []string{"get", "list"}},
			{"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": []string{"get", "list"}},
		},
	}
}

func aggregated() map[string]any {
	resource := func(name, kind, scope string) map[string]any {
		return map[string]any{"resource": name, "responseKind": map[string]string{"group": "", "version": "", "kind": kind}, "scope": scope, "singularResource": "", "verbs": []string{"get", "list"}}
	}
	return map[string]any{
		"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": map[string]any{},
		"items": []map[string]any{{
			"metadata": map[string]any{"name": group},
			"versions": []map[string]any{{"version": version, "resources": []map[string]any{resource("nodes", "NodeMetrics", "Cluster"), resource("pods", "PodMetrics", "Namespaced")}, "freshness": "Current"}},
		}},
	}
}

func main() {
	certFile := flag.String("tls-cert-file", "", "serving certificate")
	keyFile := flag.String("tls-private-key-file", "", "serving key")
	caFile := flag.String("requestheader-client-ca-file", "", "front-proxy CA")
	fixturesFile := flag.String("fixtures", "", "JSON fixture file")
	portFile := flag.String("port-file", "", "where to write the port listened on")
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()

	var data fixtures
	raw, err := os.ReadFile(*fixturesFile)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		log.Fatal(err)
	}
	caPEM, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		log.Fatal("no certificate in the requestheader CA file")
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatal(err)
	}
	started := time.Now().UTC().Format(time.RFC3339)

	nodeMetrics := func(i int) map[string]any {
		n := data.Nodes[i]
		return map[string]any{"metadata": map[string]any{"name": n.Name, "creationTimestamp": started}, "timestamp": started, "window": "10s", "usage": n.usage}
	}
	podMetrics := func(i int) map[string]any {
		p := data.Pods[i]
		containers := []map[string]any{}
		for _, c := range p.Containers {
			containers = append(containers, map[string]any{"name": c.Name, "usage": c.usage})
		}
		return map[string]any{"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "creationTimestamp": started}, "timestamp": started, "window": "10s", "containers": containers}
	}
	list := func(kind string, items []map[string]any) map[string]any {
		return map[string]any{"kind": kind, "apiVersion": gv, "metadata": map[string]any{}, "items": items}
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" || r.URL.Path == "/livez" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		// An aggregated API server trusts the user headers only from a verified front proxy.
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || r.Header.Get("X-Remote-User") == "" {
			status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
			return
		}
		path := strings.TrimSuffix(r.URL.Path, "/")
		segments := strings.Split(strings.TrimPrefix(path, "/"), "/")
		switch {
		case path == "/apis":
			if strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList") && strings.Contains(r.Header.Get("Accept"), "v=v2;") {
				writeJSON(w, 200, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", aggregated())
				return
			}
			gvd := map[string]string{"groupVersion": gv, "version": version}
			writeJSON(w, 200, "application/json", map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []map[string]any{{"name": group, "versions": []any{gvd}, "preferredVersion": gvd}}})
		case path == "/apis/"+group:
			gvd := map[string]string{"groupVersion": gv, "version": version}
			writeJSON(w, 200, "application/json", map[string]any{"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": []any{gvd}, "preferredVersion": gvd})
		case path == "/apis/"+gv:
			writeJSON(w, 200, "application/json", resourceList())
		case len(segments) >= 4 && segments[0] == "apis" && segments[1] == group && segments[2] == version:
			rest := segments[3:]
			namespace := ""
			if len(rest) >= 3 && rest[0] == "namespaces" {
				namespace, rest = rest[1], rest[2:]
			}
			switch {
			case namespace == "" && rest[0] == "nodes" && len(rest) == 1:
				items := []map[string]any{}
				for i := range data.Nodes {
					items = append(items, nodeMetrics(i))
				}
				writeJSON(w, 200, "application/json", list("NodeMetricsList", items))
			case namespace == "" && rest[0] == "nodes" && len(rest) == 2:
				for i, n := range data.Nodes {
					if n.Name == rest[1] {
						m := nodeMetrics(i)
						m["kind"], m["apiVersion"] = "NodeMetrics", gv
						writeJSON(w, 200, "application/json", m)
						return
					}
				}
				status(w, 404, "NotFound", fmt.Sprintf("nodemetrics.metrics.k8s.io %q not found", rest[1]))
			case rest[0] == "pods" && len(rest) == 1:
				items := []map[string]any{}
				for i, p := range data.Pods {
					if namespace == "" || p.Namespace == namespace {
						items = append(items, podMetrics(i))
					}
				}
				writeJSON(w, 200, "application/json", list("PodMetricsList", items))
			case rest[0] == "pods" && len(rest) == 2 && namespace != "":
				for i, p := range data.Pods {
					if p.Namespace == namespace && p.Name == rest[1] {
						m := podMetrics(i)
						m["kind"], m["apiVersion"] = "PodMetrics", gv
						writeJSON(w, 200, "application/json", m)
						return
					}
				}
				status(w, 404, "NotFound", fmt.Sprintf("podmetrics.metrics.k8s.io %q not found", rest[1]))
			default:
				status(w, 404, "NotFound", "the server could not find the requested resource")
			}
		default:
			http.NotFound(w, r)
		}
	})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if *portFile != "" {
		if err := os.WriteFile(*portFile, []byte(fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	server := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}}
	log.Fatal(server.ServeTLS(ln, "", ""))
}

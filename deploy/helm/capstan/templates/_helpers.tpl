{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "capstan.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: release-chart unless the release name already contains the chart name. */}}
{{- define "capstan.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "capstan.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "capstan.labels" -}}
helm.sh/chart: {{ include "capstan.chart" . }}
{{ include "capstan.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "capstan.redisLabels" -}}
helm.sh/chart: {{ include "capstan.chart" . }}
{{ include "capstan.redisSelectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "capstan.selectorLabels" -}}
app.kubernetes.io/name: {{ include "capstan.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: apiserver
{{- end }}

{{- define "capstan.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "capstan.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end }}

{{- define "capstan.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "capstan.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "capstan.redisFullname" -}}
{{- printf "%s-redis" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* True (non-empty) when a Redis password is in play: an existing Secret, a given one, or the bundled Redis's. */}}
{{- define "capstan.redisPasswordEnabled" -}}
{{- if or .Values.redis.existingSecret .Values.redis.password .Values.redis.bundled.enabled }}true{{- end }}
{{- end }}

{{/* Name of the Secret holding the Redis password. */}}
{{- define "capstan.redisSecretName" -}}
{{- if .Values.redis.existingSecret }}
{{- .Values.redis.existingSecret }}
{{- else }}
{{- printf "%s-redis" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "capstan.redisSecretKey" -}}
{{- if .Values.redis.existingSecret }}
{{- .Values.redis.existingSecretPasswordKey }}
{{- else }}
{{- "redis-password" }}
{{- end }}
{{- end }}

{{/*
The --redis-url value, without the password: Capstan reads it from CAPSTAN_REDIS_PASSWORD (set
from the Secret), so it appears neither in the manifest nor in the process arguments.
*/}}
{{- define "capstan.redisUrl" -}}
{{- $url := .Values.redis.url }}
{{- if .Values.redis.bundled.enabled }}
{{- $url = printf "redis://%s:6379" (include "capstan.redisFullname" .) }}
{{- end }}
{{- $parts := splitn "://" 2 $url }}
{{- $scheme := $parts._0 }}
{{- $rest := $parts._1 }}
{{- if not $rest }}
{{- fail (printf "redis.url %q must look like redis://host:port or rediss://host:port" $url) }}
{{- end }}
{{- if .Values.redis.tls.enabled }}
{{- $scheme = "rediss" }}
{{- end }}
{{- printf "%s://%s" $scheme $rest }}
{{- end }}

{{/* Secret with the serving certificate: the operator's, or the one the chart generates. */}}
{{- define "capstan.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-") .Values.tls.secretName }}
{{- end }}

{{/* Secret with the static token file holding the admin token. */}}
{{- define "capstan.adminSecretName" -}}
{{- default (printf "%s-admin" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-") .Values.admin.existingSecret }}
{{- end }}

{{/* Secret with the token Prometheus scrapes /metrics with (made with the admin Secret). */}}
{{- define "capstan.metricsSecretName" -}}
{{- printf "%s-metrics" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "capstan.adminSecretKey" -}}
{{- if .Values.admin.existingSecret }}{{ .Values.admin.existingSecretKey }}{{ else }}tokens.csv{{ end }}
{{- end }}

{{/* Secret with the key signing service account tokens. */}}
{{- define "capstan.serviceAccountKeySecretName" -}}
{{- default (printf "%s-service-account" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-") .Values.serviceAccountKey.secretName }}
{{- end }}

{{/* DNS names of the generated serving certificate: the Service's, in every form a client uses. */}}
{{- define "capstan.servingDnsNames" -}}
{{- $svc := include "capstan.fullname" . }}
{{- $names := list "localhost" $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) }}
{{- concat $names .Values.tls.extraDnsNames | uniq | toJson }}
{{- end }}

{{/* The container's command-line flags. */}}
{{- define "capstan.args" -}}
- --bind-address=0.0.0.0
- --secure-port={{ .Values.containerPort }}
- --cert-dir=/tmp/capstan-pki
- --tls-cert-file=/etc/capstan/tls/tls.crt
- --tls-private-key-file=/etc/capstan/tls/tls.key
- --service-account-signing-key-file=/etc/capstan/service-account/{{ .Values.serviceAccountKey.key }}
- --token-auth-file=/etc/capstan/admin/{{ include "capstan.adminSecretKey" . }}
- --authorization-mode={{ .Values.authorizationMode }}
- --anonymous-auth={{ .Values.anonymousAuth }}
{{- with .Values.enableAdmissionPlugins }}
- --enable-admission-plugins={{ join "," . }}
{{- end }}
- --storage={{ .Values.storage }}
- --workers={{ .Values.workers }}
- --log-level={{ .Values.logLevel }}
- --shutdown-delay-duration={{ .Values.shutdownDelayDuration }}
- --watch-cache-history={{ .Values.watchCacheHistory }}
{{- if eq .Values.storage "redis" }}
- --redis-url={{ include "capstan.redisUrl" . }}
{{- with .Values.redis.cluster }}
- --redis-cluster={{ join "," . }}
{{- end }}
{{- with .Values.redis.sentinels }}
- --redis-sentinels={{ join "," . }}
- --redis-sentinel-name={{ $.Values.redis.sentinelName }}
{{- end }}
{{- if .Values.redis.waitReplicas }}
- --redis-wait-replicas={{ .Values.redis.waitReplicas }}
{{- end }}
{{- end }}
{{- $gates := list }}
{{- range $name, $enabled := .Values.featureGates }}
{{- $gates = append $gates (printf "%s=%v" $name $enabled) }}
{{- end }}
{{- if $gates }}
- --feature-gates={{ join "," $gates }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* Rejects value combinations that cannot work. */}}
{{- define "capstan.validate" -}}
{{- if not (has .Values.storage (list "redis" "memory")) }}
{{- fail "storage must be redis or memory" }}
{{- end }}
{{- if eq .Values.storage "memory" }}
{{- if or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled }}
{{- fail "storage=memory keeps data inside one pod: set replicaCount=1 and autoscaling.enabled=false, or use storage=redis" }}
{{- end }}
{{- if ne (toString .Values.workers) "1" }}
{{- fail "storage=memory lives in one process: set workers=1, or use storage=redis" }}
{{- end }}
{{- end }}
{{- end }}

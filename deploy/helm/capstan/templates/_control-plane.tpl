{{/*
kube-controller-manager and kube-scheduler beside Capstan (values: controlPlane). See
docs/control-plane.md: each component authenticates with a client certificate from the kubeconfig
in its Secret, issued by the CA Capstan trusts through controlPlane.clientCA.
*/}}

{{- define "capstan.controllerManagerFullname" -}}
{{- printf "%s-kube-controller-manager" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "capstan.schedulerFullname" -}}
{{- printf "%s-kube-scheduler" (include "capstan.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of a control-plane component ($ is the root context, .component its name). */}}
{{- define "capstan.componentSelectorLabels" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "capstan.componentLabels" -}}
helm.sh/chart: {{ include "capstan.chart" .root }}
{{ include "capstan.componentSelectorLabels" . }}
app.kubernetes.io/part-of: {{ include "capstan.fullname" .root }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/* The Secret with a component's kubeconfig: the one named, else <fullname>-<component>-kubeconfig. */}}
{{- define "capstan.componentKubeconfigSecret" -}}
{{- .values.kubeconfigSecret | default (printf "%s-%s-kubeconfig" (include "capstan.fullname" .root) .component | trunc 63 | trimSuffix "-") }}
{{- end }}

{{/* Capstan's own flags when the control plane runs beside it: kube-controller-manager's controllers are left to it, and the components' client CA is trusted. */}}
{{- define "capstan.controlPlaneArgs" -}}
{{- if .Values.controlPlane.controllerManager.enabled }}
- --controllers=
{{- end }}
{{- if .Values.controlPlane.clientCA.secretName }}
- --client-ca-file=/etc/capstan/client-ca/{{ .Values.controlPlane.clientCA.key }}
{{- end }}
{{- end }}

{{- define "capstan.controlPlaneVolumeMounts" -}}
{{- if .Values.controlPlane.clientCA.secretName }}
- name: client-ca
  mountPath: /etc/capstan/client-ca
  readOnly: true
{{- end }}
{{- end }}

{{- define "capstan.controlPlaneVolumes" -}}
{{- if .Values.controlPlane.clientCA.secretName }}
- name: client-ca
  secret:
    secretName: {{ .Values.controlPlane.clientCA.secretName }}
{{- end }}
{{- end }}

{{/* Rejects control-plane values that cannot work. */}}
{{- define "capstan.controlPlaneValidate" -}}
{{- $cp := .Values.controlPlane }}
{{- if or $cp.controllerManager.enabled $cp.scheduler.enabled }}
{{- if not $cp.clientCA.secretName }}
{{- fail "controlPlane: set controlPlane.clientCA.secretName, the CA that issued the components' client certificates (docs/control-plane.md)" }}
{{- end }}
{{- if not .Values.tls.secretName }}
{{- fail "controlPlane: set tls.secretName: the components verify Capstan's serving certificate, which must be the same on every pod" }}
{{- end }}
{{- end }}
{{- if and $cp.controllerManager.enabled (not .Values.serviceAccountKey.secretName) }}
{{- fail "controlPlane.controllerManager: set serviceAccountKey.secretName, so that the controllers' service account tokens verify on every Capstan pod" }}
{{- end }}
{{- end }}

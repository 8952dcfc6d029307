{{/* Names and labels shared by every template. */}}

{{- define "csi-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: <release>-csi-operator, or the release name if it contains the
chart's name already. 52 characters at most, so that suffixes keep names within 63. */}}
{{- define "csi-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "csi-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "csi-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "csi-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "csi-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "csi-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "csi-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "csi-operator.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "csi-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "csi-operator.fullname" .) -}}
{{- end -}}

{{- define "csi-operator.webhookSecretName" -}}
{{- printf "%s-webhook-tls" (include "csi-operator.fullname" .) -}}
{{- end -}}

{{/* The DNS names of the webhook Service, which the serving certificate must carry. */}}
{{- define "csi-operator.webhookDnsNames" -}}
{{- $svc := include "csi-operator.webhookServiceName" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson -}}
{{- end -}}

{{/* "true" when the ServiceMonitor is rendered: metrics.serviceMonitor.enabled, and the
cluster serves monitoring.coreos.com/v1 ServiceMonitor (or metrics.serviceMonitor.force). */}}
{{- define "csi-operator.serviceMonitor" -}}
{{- $sm := .Values.metrics.serviceMonitor -}}
{{- if and $sm.enabled (or $sm.force (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor")) -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the PrometheusRule is rendered: metrics.prometheusRule.enabled, and the cluster
serves monitoring.coreos.com/v1 PrometheusRule (or metrics.prometheusRule.force). */}}
{{- define "csi-operator.prometheusRule" -}}
{{- $pr := .Values.metrics.prometheusRule -}}
{{- if and $pr.enabled (or $pr.force (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")) -}}
true
{{- end -}}
{{- end -}}

{{/* The label matchers that pick this release's operator series out of Prometheus:
metrics.prometheusRule.selector, or the labels the chart's ServiceMonitor gives them (the
release namespace, and the metrics Service's name as the job unless jobLabel says otherwise). */}}
{{- define "csi-operator.alertSelector" -}}
{{- $pr := .Values.metrics.prometheusRule -}}
{{- if $pr.selector -}}
{{ $pr.selector }}
{{- else if .Values.metrics.serviceMonitor.jobLabel -}}
namespace="{{ .Release.Namespace }}"
{{- else -}}
namespace="{{ .Release.Namespace }}",job="{{ include "csi-operator.fullname" . }}-metrics"
{{- end -}}
{{- end -}}

{{/* "true" when the metrics Service is rendered: asked for, or selected by the ServiceMonitor. */}}
{{- define "csi-operator.metricsService" -}}
{{- if or .Values.metrics.service.enabled (include "csi-operator.serviceMonitor" .) -}}
true
{{- end -}}
{{- end -}}

{{/* The metrics Service's labels: the chart's, and the component label the ServiceMonitor selects
it by (over a component label of commonLabels). */}}
{{- define "csi-operator.metricsServiceLabels" -}}
{{- $labels := fromYaml (include "csi-operator.labels" .) -}}
{{- $_ := set $labels "app.kubernetes.io/component" "metrics" -}}
{{- toYaml $labels -}}
{{- end -}}

{{/* The API group of an apiVersion ("" for the core group's "v1"). */}}
{{- define "csi-operator.apiGroup" -}}
{{- if contains "/" . }}{{ index (splitList "/" .) 0 }}{{ end -}}
{{- end -}}

# Sourced by the cost scripts (list_cost.sh, stdio_cost.sh, registry_scale.sh,
# http_cost.sh): the instructions a callgrind run collected, read from its
# log (the file $1, or standard input).
callgrind_total() {
    grep -o 'Collected : [0-9]*' "${1:-/dev/stdin}" | awk '{print $3}'
}

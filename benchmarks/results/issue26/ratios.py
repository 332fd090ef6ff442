# Per-run ratios of BenchmarkCall result files: each run's zaplens CPU over the same run's zap alone and official bridge.
#   python3 ratios.py call-final-old.txt call-final-new.txt
import sys, re, statistics as st
def runs(path):
    out=[]; cur={}
    for l in open(path):
        if not l.startswith('BenchmarkCall/'): continue
        name=l.split()[0].split('=')[1].rsplit('-',1)[0]
        f=l.split(); m={}
        for i in range(1,len(f)):
            if not re.match(r'^[-0-9.]+$', f[i-1]): continue
            m[f[i]]=float(f[i-1])
        cur[name]=m
        if name=='zaplens': out.append(cur); cur={}
    return out
for path in sys.argv[1:]:
    rs=runs(path)
    zr=[r['zaplens']['cpu-ns/op']/r['zap']['cpu-ns/op'] for r in rs]
    orr=[r['zaplens']['cpu-ns/delivered']/r['official']['cpu-ns/delivered'] for r in rs]
    cr=[r['zaplens']['caller-cpu-ns/op']/r['zap']['caller-cpu-ns/op'] for r in rs]
    print(path, 'runs', len(rs))
    print('  zap cpu/op   ', [round(r['zap']['cpu-ns/op']) for r in rs], 'median', st.median(r['zap']['cpu-ns/op'] for r in rs))
    print('  zaplens cpu/op', [round(r['zaplens']['cpu-ns/op']) for r in rs], 'median', st.median(r['zaplens']['cpu-ns/op'] for r in rs))
    print('  official cpu/deliv', [round(r['official']['cpu-ns/delivered']) for r in rs], 'median', st.median(r['official']['cpu-ns/delivered'] for r in rs))
    print('  zaplens/zap cpu per run', [round(x,2) for x in zr], 'median %.2f'%st.median(zr), 'min %.2f max %.2f'%(min(zr),max(zr)))
    print('  zaplens/official cpu/delivered per run', [round(x,3) for x in orr], 'median %.3f'%st.median(orr))
    print('  caller cpu ratio per run', [round(x,2) for x in cr], 'median %.2f'%st.median(cr))
    print('  %delivered zaplens', [r['zaplens'].get('%delivered') for r in rs], 'official', [r['official'].get('%delivered') for r in rs])
